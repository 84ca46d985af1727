/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CRI messages: decoded with protobuf-c into plain structs that own their strings, and
 * forwarded requests with nodecm's fields set, re-encoded. protobuf-c keeps the fields it does
 * not know, at every level, and writes them back, so a message from a newer kubelet decodes
 * and is forwarded whole.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cdi.h>
#include <nodecm/cri.h>
#include "api/pb-strings.h"
#include "api/pb-util.h"
#include "cri-runtime-v1.pb-c.h"
#include "cri-internal.h"

static const char *const paths[NCM_CRI_N_METHODS] = {
                [NCM_CRI_VERSION] = "/runtime.v1.RuntimeService/Version",
                [NCM_CRI_RUN_POD_SANDBOX] = "/runtime.v1.RuntimeService/RunPodSandbox",
                [NCM_CRI_STOP_POD_SANDBOX] = "/runtime.v1.RuntimeService/StopPodSandbox",
                [NCM_CRI_REMOVE_POD_SANDBOX] = "/runtime.v1.RuntimeService/RemovePodSandbox",
                [NCM_CRI_LIST_POD_SANDBOX] = "/runtime.v1.RuntimeService/ListPodSandbox",
                [NCM_CRI_CREATE_CONTAINER] = "/runtime.v1.RuntimeService/CreateContainer",
                [NCM_CRI_START_CONTAINER] = "/runtime.v1.RuntimeService/StartContainer",
                [NCM_CRI_STOP_CONTAINER] = "/runtime.v1.RuntimeService/StopContainer",
                [NCM_CRI_REMOVE_CONTAINER] = "/runtime.v1.RuntimeService/RemoveContainer",
                [NCM_CRI_LIST_CONTAINERS] = "/runtime.v1.RuntimeService/ListContainers",
                [NCM_CRI_CONTAINER_STATUS] = "/runtime.v1.RuntimeService/ContainerStatus",
                [NCM_CRI_UPDATE_CONTAINER_RESOURCES] =
                                "/runtime.v1.RuntimeService/UpdateContainerResources",
};

const char *ncm_cri_method_path(ncm_cri_method m)
{
        return (unsigned)m < NCM_CRI_N_METHODS ? paths[m] : NULL;
}

int ncm_cri_method_from_path(const char *path)
{
        for (int m = 0; m < NCM_CRI_N_METHODS; m++)
                if (path && strcmp(paths[m], path) == 0)
                        return m;
        return -1;
}

const char *ncm_cri_container_state_name(int state)
{
        switch (state) {
        case NCM_CRI_CONTAINER_CREATED:
                return "CONTAINER_CREATED";
        case NCM_CRI_CONTAINER_RUNNING:
                return "CONTAINER_RUNNING";
        case NCM_CRI_CONTAINER_EXITED:
                return "CONTAINER_EXITED";
        default:
                return "CONTAINER_UNKNOWN";
        }
}

static int oom(ncm_error *err)
{
        return ncm_error_set(err, ENOMEM, "out of memory");
}

/* ---- freeing -------------------------------------------------------------------------------- */

void ncm_cri_kvs_done(ncm_cri_kvs *k)
{
        for (size_t i = 0; i < k->n; i++) {
                free((char *)k->v[i].key);
                free((char *)k->v[i].value);
        }
        free(k->v);
        *k = (ncm_cri_kvs){NULL, 0};
}

const char *ncm_cri_kvs_get(const ncm_cri_kvs *k, const char *key)
{
        for (size_t i = 0; i < k->n; i++)
                if (strcmp(k->v[i].key, key) == 0)
                        return k->v[i].value;
        return NULL;
}

void ncm_cri_resources_done(ncm_cri_resources *r)
{
        free(r->cpuset_cpus);
        free(r->cpuset_mems);
        *r = (ncm_cri_resources){0};
}

void ncm_cri_sandbox_config_done(ncm_cri_sandbox_config *s)
{
        free(s->uid);
        free(s->name);
        free(s->namespace);
        free(s->cgroup_parent);
        ncm_cri_kvs_done(&s->labels);
        ncm_cri_kvs_done(&s->annotations);
        ncm_cri_resources_done(&s->overhead);
        ncm_cri_resources_done(&s->resources);
        *s = (ncm_cri_sandbox_config){0};
}

void ncm_cri_container_config_done(ncm_cri_container_config *c)
{
        free(c->pod_sandbox_id);
        free(c->name);
        ncm_cri_kvs_done(&c->labels);
        ncm_cri_kvs_done(&c->annotations);
        ncm_cri_resources_done(&c->resources);
        ncm_cri_sandbox_config_done(&c->sandbox);
        for (size_t i = 0; i < c->n_cdi_devices; i++)
                free(c->cdi_devices[i]);
        free(c->cdi_devices);
        if (c->msg)
                protobuf_c_message_free_unpacked(c->msg, NULL);
        *c = (ncm_cri_container_config){0};
}

void ncm_cri_sandbox_done(ncm_cri_sandbox *s)
{
        free(s->id);
        free(s->uid);
        free(s->name);
        free(s->namespace);
        ncm_cri_kvs_done(&s->labels);
        ncm_cri_kvs_done(&s->annotations);
        *s = (ncm_cri_sandbox){0};
}

void ncm_cri_container_done(ncm_cri_container *c)
{
        free(c->id);
        free(c->pod_sandbox_id);
        free(c->name);
        ncm_cri_kvs_done(&c->labels);
        ncm_cri_kvs_done(&c->annotations);
        ncm_cri_resources_done(&c->resources);
        *c = (ncm_cri_container){0};
}

void ncm_cri_version_done(ncm_cri_version *v)
{
        free(v->version);
        free(v->runtime_name);
        free(v->runtime_version);
        free(v->runtime_api_version);
        *v = (ncm_cri_version){0};
}

void ncm_cri_sandboxes_free(ncm_cri_sandbox *v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                ncm_cri_sandbox_done(&v[i]);
        free(v);
}

void ncm_cri_containers_free(ncm_cri_container *v, size_t n)
{
        for (size_t i = 0; i < n; i++)
                ncm_cri_container_done(&v[i]);
        free(v);
}

/* ---- decoding ------------------------------------------------------------------------------- */

/* A copy of a protobuf-c string (NULL becomes ""). */
static int sdup(const char *s, char **ret)
{
        *ret = strdup(s ? s : "");
        return *ret ? 0 : -ENOMEM;
}

/*
 * A map field: protobuf-c gives N entries whose layout is the same for every map<string,
 * string> ({base, key, value}); KEY_OFF and VALUE_OFF come from the entry type at the call.
 */
#define KVS(kvs, n, entries)                                                                       \
        kvs_copy((kvs), (n), (void *const *)(entries), offsetof(__typeof__(**(entries)), key),     \
                 offsetof(__typeof__(**(entries)), value))

static int kvs_copy(ncm_cri_kvs *ret, size_t n, void *const *entries, size_t key_off,
                    size_t value_off)
{
        ncm_cri_kvs k = {calloc(n + 1, sizeof(ncm_runtime_kv)), 0};

        if (!k.v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const char *key = *(const char *const *)((const char *)entries[i] + key_off);
                const char *val = *(const char *const *)((const char *)entries[i] + value_off);
                char *kk = NULL, *vv = NULL;
                if (sdup(key, &kk) < 0 || sdup(val, &vv) < 0) {
                        free(kk);
                        ncm_cri_kvs_done(&k);
                        return -ENOMEM;
                }
                /* a map repeats a key when a sender appended an entry: the last one wins */
                for (size_t j = 0; j < k.n; j++)
                        if (strcmp(k.v[j].key, kk) == 0) {
                                free((char *)k.v[j].value);
                                k.v[j].value = vv;
                                free(kk);
                                kk = NULL;
                                break;
                        }
                if (kk) {
                        k.v[k.n].key = kk;
                        k.v[k.n++].value = vv;
                }
        }
        *ret = k;
        return 0;
}

static int resources_copy(const Runtime__V1__LinuxContainerResources *m, ncm_cri_resources *ret)
{
        ncm_cri_resources r = {0};

        if (!m) {
                if (sdup("", &r.cpuset_cpus) < 0 || sdup("", &r.cpuset_mems) < 0) {
                        ncm_cri_resources_done(&r);
                        return -ENOMEM;
                }
                *ret = r;
                return 0;
        }
        r.present = true;
        r.r.cpu_shares = m->cpu_shares;
        r.r.cpu_quota = m->cpu_quota;
        r.r.cpu_period = m->cpu_period;
        r.r.memory_limit = m->memory_limit_in_bytes;
        for (size_t i = 0; i < m->n_hugepage_limits; i++) {
                const Runtime__V1__HugepageLimit *h = m->hugepage_limits[i];
                int64_t size;
                /* a size nodecm cannot name is a limit nodecm cannot use */
                if (!h || h->limit == 0 || h->limit > INT64_MAX ||
                    ncm_runtime_parse_page_size(h->page_size, &size) < 0 ||
                    r.r.n_hugepages == NCM_RUNTIME_MAX_HUGEPAGES)
                        continue;
                r.r.hugepages[r.r.n_hugepages].page_size = size;
                r.r.hugepages[r.r.n_hugepages++].limit = (int64_t)h->limit;
        }
        if (sdup(m->cpuset_cpus, &r.cpuset_cpus) < 0 || sdup(m->cpuset_mems, &r.cpuset_mems) < 0) {
                ncm_cri_resources_done(&r);
                return -ENOMEM;
        }
        *ret = r;
        return 0;
}

static int sandbox_config_copy(const Runtime__V1__PodSandboxConfig *m, ncm_cri_sandbox_config *ret)
{
        ncm_cri_sandbox_config s = {0};
        const Runtime__V1__PodSandboxMetadata *md = m ? m->metadata : NULL;
        const Runtime__V1__LinuxPodSandboxConfig *lx = m ? m->linux : NULL;
        int r = 0;

        if (sdup(md ? md->uid : NULL, &s.uid) < 0 || sdup(md ? md->name : NULL, &s.name) < 0 ||
            sdup(md ? md->namespace_ : NULL, &s.namespace) < 0 ||
            sdup(lx ? lx->cgroup_parent : NULL, &s.cgroup_parent) < 0)
                r = -ENOMEM;
        s.attempt = md ? md->attempt : 0;
        if (r >= 0 && m)
                r = KVS(&s.labels, m->n_labels, m->labels);
        if (r >= 0 && m)
                r = KVS(&s.annotations, m->n_annotations, m->annotations);
        if (r >= 0)
                r = resources_copy(lx ? lx->overhead : NULL, &s.overhead);
        if (r >= 0)
                r = resources_copy(lx ? lx->resources : NULL, &s.resources);
        if (r < 0) {
                ncm_cri_sandbox_config_done(&s);
                return r;
        }
        *ret = s;
        return 0;
}

/* Unpack MSG as DESC, or the decoder's error naming the message. */
static int unpack(const ProtobufCMessageDescriptor *desc, const uint8_t *msg, size_t len,
                  ProtobufCMessage **ret, ncm_error *err)
{
        /* protobuf-c would cut a string at a NUL: a pod UID or name must arrive whole */
        int r = ncm__pb_check_strings(desc, msg, len, err);

        if (r < 0)
                return r;
        *ret = protobuf_c_message_unpack(desc, NULL, len, msg);
        if (!*ret)
                return ncm_error_set(err, EINVAL, "%s: does not decode", desc->short_name);
        return 0;
}

#define UNPACK(type, lower, msg, len, ret, err)                                                    \
        unpack(&runtime__v1__##lower##__descriptor, (msg), (len), (ProtobufCMessage **)(ret), (err))

int ncm_cri_decode_run_pod_sandbox(const uint8_t *msg, size_t len, ncm_cri_sandbox_config *ret,
                                   ncm_error *err)
{
        Runtime__V1__RunPodSandboxRequest *m = NULL;
        int r = UNPACK(RunPodSandboxRequest, run_pod_sandbox_request, msg, len, &m, err);

        if (r < 0)
                return r;
        r = sandbox_config_copy(m->config, ret);
        protobuf_c_message_free_unpacked(&m->base, NULL);
        return r < 0 ? oom(err) : 0;
}

/* Field 1 of a message whose field 1 is a string: every response or request with an id. */
int ncm_cri_decode_id(const uint8_t *msg, size_t len, char **ret_id, ncm_error *err)
{
        Runtime__V1__StartContainerRequest *m = NULL;
        int r = UNPACK(StartContainerRequest, start_container_request, msg, len, &m, err);

        if (r < 0)
                return ncm_error_set(err, EINVAL, "request with an id: does not decode");
        r = sdup(m->container_id, ret_id);
        protobuf_c_message_free_unpacked(&m->base, NULL);
        return r < 0 ? oom(err) : 0;
}

int ncm_cri_decode_run_pod_sandbox_response(const uint8_t *msg, size_t len, char **ret_id,
                                            ncm_error *err)
{
        return ncm_cri_decode_id(msg, len, ret_id, err);
}

int ncm_cri_decode_create_container_response(const uint8_t *msg, size_t len, char **ret_id,
                                             ncm_error *err)
{
        return ncm_cri_decode_id(msg, len, ret_id, err);
}

static int cdi_push(ncm_cri_container_config *c, const char *name, size_t len)
{
        char **v;
        for (size_t i = 0; i < c->n_cdi_devices; i++)
                if (strlen(c->cdi_devices[i]) == len && memcmp(c->cdi_devices[i], name, len) == 0)
                        return 0;
        v = realloc(c->cdi_devices, (c->n_cdi_devices + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        c->cdi_devices = v;
        if (!(v[c->n_cdi_devices] = strndup(name, len)))
                return -ENOMEM;
        c->n_cdi_devices++;
        return 0;
}

/* The CDI names of CC: annotations "cdi.k8s.io/<key>: a,b" (CDI's convention), then field 17;
 * each name once. */
static int cdi_devices_copy(const Runtime__V1__ContainerConfig *cc, ncm_cri_container_config *c)
{
        int r = 0;

        for (size_t i = 0; i < cc->n_annotations && r >= 0; i++) {
                const Runtime__V1__ContainerConfig__AnnotationsEntry *a = cc->annotations[i];
                const char *p;
                if (!a->key || !a->value ||
                    strncmp(a->key, NCM_CDI_ANNOTATION_PREFIX, strlen(NCM_CDI_ANNOTATION_PREFIX)))
                        continue;
                for (p = a->value; *p && r >= 0;) {
                        size_t len = strcspn(p, ",");
                        if (len)
                                r = cdi_push(c, p, len);
                        p += len + (p[len] == ',');
                }
        }
        for (size_t i = 0; i < cc->n_cdi_devices && r >= 0; i++)
                if (cc->cdi_devices[i] && cc->cdi_devices[i]->name && cc->cdi_devices[i]->name[0])
                        r = cdi_push(c, cc->cdi_devices[i]->name, strlen(cc->cdi_devices[i]->name));
        return r;
}

int ncm_cri_decode_create_container(const uint8_t *msg, size_t len, ncm_cri_container_config *ret,
                                    ncm_error *err)
{
        Runtime__V1__CreateContainerRequest *m = NULL;
        ncm_cri_container_config c = {0};
        const Runtime__V1__ContainerConfig *cc;
        int r = UNPACK(CreateContainerRequest, create_container_request, msg, len, &m, err);

        if (r < 0)
                return r;
        cc = m->config;
        if (sdup(m->pod_sandbox_id, &c.pod_sandbox_id) < 0 ||
            sdup(cc && cc->metadata ? cc->metadata->name : NULL, &c.name) < 0)
                r = -ENOMEM;
        c.attempt = cc && cc->metadata ? cc->metadata->attempt : 0;
        if (r >= 0 && cc)
                r = KVS(&c.labels, cc->n_labels, cc->labels);
        if (r >= 0 && cc)
                r = KVS(&c.annotations, cc->n_annotations, cc->annotations);
        if (r >= 0)
                r = resources_copy(cc && cc->linux ? cc->linux->resources : NULL, &c.resources);
        c.has_sandbox = m->sandbox_config != NULL;
        if (r >= 0)
                r = sandbox_config_copy(m->sandbox_config, &c.sandbox);
        if (r >= 0 && cc)
                r = cdi_devices_copy(cc, &c);
        /* kept: a patch edits it (ncm_cri_container_config_patch) */
        c.msg = m;
        if (r < 0) {
                ncm_cri_container_config_done(&c);
                return oom(err);
        }
        *ret = c;
        return 0;
}

int ncm_cri_decode_update_resources(const uint8_t *msg, size_t len, char **ret_id,
                                    ncm_cri_resources *ret, ncm_error *err)
{
        Runtime__V1__UpdateContainerResourcesRequest *m = NULL;
        char *id = NULL;
        int r = UNPACK(UpdateContainerResourcesRequest, update_container_resources_request, msg,
                       len, &m, err);

        if (r < 0)
                return r;
        r = sdup(m->container_id, &id);
        if (r >= 0)
                r = resources_copy(m->linux, ret);
        protobuf_c_message_free_unpacked(&m->base, NULL);
        if (r < 0) {
                free(id);
                return oom(err);
        }
        *ret_id = id;
        return 0;
}

int ncm_cri_decode_version(const uint8_t *msg, size_t len, ncm_cri_version *ret, ncm_error *err)
{
        Runtime__V1__VersionResponse *m = NULL;
        ncm_cri_version v = {0};
        int r = UNPACK(VersionResponse, version_response, msg, len, &m, err);

        if (r < 0)
                return r;
        if (sdup(m->version, &v.version) < 0 || sdup(m->runtime_name, &v.runtime_name) < 0 ||
            sdup(m->runtime_version, &v.runtime_version) < 0 ||
            sdup(m->runtime_api_version, &v.runtime_api_version) < 0)
                r = -ENOMEM;
        protobuf_c_message_free_unpacked(&m->base, NULL);
        if (r < 0) {
                ncm_cri_version_done(&v);
                return oom(err);
        }
        *ret = v;
        return 0;
}

int ncm_cri_decode_sandboxes(const uint8_t *msg, size_t len, ncm_cri_sandbox **ret, size_t *ret_n,
                             ncm_error *err)
{
        Runtime__V1__ListPodSandboxResponse *m = NULL;
        ncm_cri_sandbox *v;
        size_t n = 0;
        int r = UNPACK(ListPodSandboxResponse, list_pod_sandbox_response, msg, len, &m, err);

        if (r < 0)
                return r;
        v = calloc(m->n_items + 1, sizeof(*v));
        if (!v)
                r = -ENOMEM;
        for (size_t i = 0; r >= 0 && i < m->n_items; i++) {
                const Runtime__V1__PodSandbox *p = m->items[i];
                ncm_cri_sandbox *s = &v[n++];
                if (sdup(p->id, &s->id) < 0 ||
                    sdup(p->metadata ? p->metadata->uid : NULL, &s->uid) < 0 ||
                    sdup(p->metadata ? p->metadata->name : NULL, &s->name) < 0 ||
                    sdup(p->metadata ? p->metadata->namespace_ : NULL, &s->namespace) < 0) {
                        r = -ENOMEM;
                        break;
                }
                s->attempt = p->metadata ? p->metadata->attempt : 0;
                s->ready = p->state == RUNTIME__V1__POD_SANDBOX_STATE__SANDBOX_READY;
                r = KVS(&s->labels, p->n_labels, p->labels);
                if (r >= 0)
                        r = KVS(&s->annotations, p->n_annotations, p->annotations);
        }
        protobuf_c_message_free_unpacked(&m->base, NULL);
        if (r < 0) {
                ncm_cri_sandboxes_free(v, n);
                return oom(err);
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

int ncm_cri_decode_containers(const uint8_t *msg, size_t len, ncm_cri_container **ret,
                              size_t *ret_n, ncm_error *err)
{
        Runtime__V1__ListContainersResponse *m = NULL;
        ncm_cri_container *v;
        size_t n = 0;
        int r = UNPACK(ListContainersResponse, list_containers_response, msg, len, &m, err);

        if (r < 0)
                return r;
        v = calloc(m->n_containers + 1, sizeof(*v));
        if (!v)
                r = -ENOMEM;
        for (size_t i = 0; r >= 0 && i < m->n_containers; i++) {
                const Runtime__V1__Container *p = m->containers[i];
                ncm_cri_container *c = &v[n++];
                if (sdup(p->id, &c->id) < 0 || sdup(p->pod_sandbox_id, &c->pod_sandbox_id) < 0 ||
                    sdup(p->metadata ? p->metadata->name : NULL, &c->name) < 0) {
                        r = -ENOMEM;
                        break;
                }
                c->attempt = p->metadata ? p->metadata->attempt : 0;
                c->state = p->state;
                r = KVS(&c->labels, p->n_labels, p->labels);
                if (r >= 0)
                        r = KVS(&c->annotations, p->n_annotations, p->annotations);
                if (r >= 0)
                        r = resources_copy(NULL, &c->resources);
        }
        protobuf_c_message_free_unpacked(&m->base, NULL);
        if (r < 0) {
                ncm_cri_containers_free(v, n);
                return oom(err);
        }
        *ret = v;
        *ret_n = n;
        return 0;
}

int ncm_cri_decode_container_status(const uint8_t *msg, size_t len, ncm_cri_container *ret,
                                    ncm_error *err)
{
        Runtime__V1__ContainerStatusResponse *m = NULL;
        ncm_cri_container c = {0};
        const Runtime__V1__ContainerStatus *s;
        int r = UNPACK(ContainerStatusResponse, container_status_response, msg, len, &m, err);

        if (r < 0)
                return r;
        s = m->status;
        if (sdup(s ? s->id : NULL, &c.id) < 0 || sdup(NULL, &c.pod_sandbox_id) < 0 ||
            sdup(s && s->metadata ? s->metadata->name : NULL, &c.name) < 0)
                r = -ENOMEM;
        c.attempt = s && s->metadata ? s->metadata->attempt : 0;
        c.state = s ? (int)s->state : NCM_CRI_CONTAINER_UNKNOWN;
        if (r >= 0 && s)
                r = KVS(&c.labels, s->n_labels, s->labels);
        if (r >= 0 && s)
                r = KVS(&c.annotations, s->n_annotations, s->annotations);
        if (r >= 0)
                r = resources_copy(s && s->resources ? s->resources->linux : NULL, &c.resources);
        protobuf_c_message_free_unpacked(&m->base, NULL);
        if (r < 0) {
                ncm_cri_container_done(&c);
                return oom(err);
        }
        *ret = c;
        return 0;
}

/* ---- building ------------------------------------------------------------------------------- */

/*
 * Pack MSG and append it to OUT, but only when it decodes again: protobuf-c accepts some
 * unknown fields it cannot write back in a form it (or anyone) reads, such as field number 0,
 * and nodecm forwards nothing a runtime would choke on. Known from the decoded message
 * (ncm__pb_writable), not by decoding what was packed.
 */
static int append_checked(const ProtobufCMessage *msg, ncm_buf *out, ncm_error *err)
{
        if (!ncm__pb_writable(msg))
                return ncm_error_set(err, EINVAL, "%s: does not decode once written again",
                                     msg->descriptor->short_name);
        return ncm__pb_append(msg, out);
}

/*
 * Grow an array of pointers that protobuf-c owns (it frees the unpacked message with its
 * allocator, malloc): *V of *N entries gets ADD more slots, their pointers in ADDED.
 */
static int grow_ptrs(void ***v, size_t n, size_t add)
{
        void **nv;

        if (add == 0)
                return 0;
        nv = realloc(*v, (n + add) * sizeof(*nv));
        if (!nv)
                return -ENOMEM;
        memset(nv + n, 0, add * sizeof(*nv));
        *v = nv;
        return 0;
}

static char *xstrdup(const char *s)
{
        return strdup(s ? s : "");
}

/* Set a string field protobuf-c owns (it may point at protobuf_c_empty_string). */
static int set_str(char **field, const char *v)
{
        char *n = xstrdup(v);
        if (!n)
                return -ENOMEM;
        if (*field && *field != protobuf_c_empty_string)
                free(*field);
        *field = n;
        return 0;
}

static int patch_config(Runtime__V1__ContainerConfig *cfg, const ncm_cri_container_patch *p)
{
        int r = 0;

        if ((p->cpuset_cpus && *p->cpuset_cpus) || (p->cpuset_mems && *p->cpuset_mems)) {
                if (!cfg->linux) {
                        cfg->linux = malloc(sizeof(*cfg->linux));
                        if (!cfg->linux)
                                return -ENOMEM;
                        runtime__v1__linux_container_config__init(cfg->linux);
                }
                if (!cfg->linux->resources) {
                        cfg->linux->resources = malloc(sizeof(*cfg->linux->resources));
                        if (!cfg->linux->resources)
                                return -ENOMEM;
                        runtime__v1__linux_container_resources__init(cfg->linux->resources);
                }
                if (p->cpuset_cpus && *p->cpuset_cpus)
                        r = set_str(&cfg->linux->resources->cpuset_cpus, p->cpuset_cpus);
                if (r >= 0 && p->cpuset_mems && *p->cpuset_mems)
                        r = set_str(&cfg->linux->resources->cpuset_mems, p->cpuset_mems);
                if (r < 0)
                        return r;
        }
        if (grow_ptrs((void ***)&cfg->devices, cfg->n_devices, p->n_devices) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < p->n_devices; i++) {
                Runtime__V1__Device *d = malloc(sizeof(*d));
                if (!d)
                        return -ENOMEM;
                runtime__v1__device__init(d);
                cfg->devices[cfg->n_devices++] = d;
                if (set_str(&d->container_path, p->devices[i].container_path) < 0 ||
                    set_str(&d->host_path, p->devices[i].host_path) < 0 ||
                    set_str(&d->permissions, p->devices[i].permissions) < 0)
                        return -ENOMEM;
        }
        if (grow_ptrs((void ***)&cfg->mounts, cfg->n_mounts, p->n_mounts) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < p->n_mounts; i++) {
                Runtime__V1__Mount *m = malloc(sizeof(*m));
                if (!m)
                        return -ENOMEM;
                runtime__v1__mount__init(m);
                cfg->mounts[cfg->n_mounts++] = m;
                m->readonly = p->mounts[i].readonly;
                if (set_str(&m->container_path, p->mounts[i].container_path) < 0 ||
                    set_str(&m->host_path, p->mounts[i].host_path) < 0)
                        return -ENOMEM;
        }
        if (grow_ptrs((void ***)&cfg->envs, cfg->n_envs, p->n_envs) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < p->n_envs; i++) {
                Runtime__V1__KeyValue *kv = malloc(sizeof(*kv));
                if (!kv)
                        return -ENOMEM;
                runtime__v1__key_value__init(kv);
                cfg->envs[cfg->n_envs++] = kv;
                if (set_str(&kv->key, p->envs[i].key) < 0 ||
                    set_str(&kv->value, p->envs[i].value) < 0)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < p->n_annotations; i++) {
                Runtime__V1__ContainerConfig__AnnotationsEntry *e = NULL;
                for (size_t j = 0; j < cfg->n_annotations; j++)
                        if (cfg->annotations[j]->key &&
                            strcmp(cfg->annotations[j]->key, p->annotations[i].key) == 0)
                                e = cfg->annotations[j];
                if (!e) {
                        if (grow_ptrs((void ***)&cfg->annotations, cfg->n_annotations, 1) < 0)
                                return -ENOMEM;
                        e = malloc(sizeof(*e));
                        if (!e)
                                return -ENOMEM;
                        runtime__v1__container_config__annotations_entry__init(e);
                        cfg->annotations[cfg->n_annotations++] = e;
                        if (set_str(&e->key, p->annotations[i].key) < 0)
                                return -ENOMEM;
                }
                if (set_str(&e->value, p->annotations[i].value) < 0)
                        return -ENOMEM;
        }
        if (grow_ptrs((void ***)&cfg->cdi_devices, cfg->n_cdi_devices, p->n_cdi_devices) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < p->n_cdi_devices; i++) {
                Runtime__V1__CDIDevice *d = malloc(sizeof(*d));
                if (!d)
                        return -ENOMEM;
                runtime__v1__cdidevice__init(d);
                cfg->cdi_devices[cfg->n_cdi_devices++] = d;
                if (set_str(&d->name, p->cdi_devices[i]) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* M patched with P in place and packed into OUT. */
static int patch_create(Runtime__V1__CreateContainerRequest *m, const ncm_cri_container_patch *p,
                        ncm_buf *out, ncm_error *err)
{
        int r = 0;

        if (!m->config) {
                m->config = malloc(sizeof(*m->config));
                if (!m->config)
                        r = -ENOMEM;
                else
                        runtime__v1__container_config__init(m->config);
        }
        if (r >= 0)
                r = patch_config(m->config, p);
        if (r >= 0)
                r = append_checked(&m->base, out, err);
        return r == -ENOMEM ? oom(err) : r;
}

int ncm_cri_patch_create_container(const uint8_t *msg, size_t len, const ncm_cri_container_patch *p,
                                   ncm_buf *out, ncm_error *err)
{
        Runtime__V1__CreateContainerRequest *m = NULL;
        int r = UNPACK(CreateContainerRequest, create_container_request, msg, len, &m, err);

        if (r < 0)
                return r;
        r = patch_create(m, p, out, err);
        protobuf_c_message_free_unpacked(&m->base, NULL);
        return r;
}

int ncm_cri_container_config_patch(ncm_cri_container_config *c, const ncm_cri_container_patch *p,
                                   ncm_buf *out, ncm_error *err)
{
        if (!c->msg)
                return ncm_error_set(err, EINVAL, "CreateContainerRequest: not decoded");
        return patch_create(c->msg, p, out, err);
}

int ncm_cri_patch_update_resources(const uint8_t *msg, size_t len, const char *cpuset_cpus,
                                   const char *cpuset_mems, ncm_buf *out, ncm_error *err)
{
        Runtime__V1__UpdateContainerResourcesRequest *m = NULL;
        int r = UNPACK(UpdateContainerResourcesRequest, update_container_resources_request, msg,
                       len, &m, err);

        if (r < 0)
                return r;
        if (!m->linux) {
                m->linux = malloc(sizeof(*m->linux));
                if (!m->linux)
                        r = -ENOMEM;
                else
                        runtime__v1__linux_container_resources__init(m->linux);
        }
        if (r >= 0 && cpuset_cpus)
                r = set_str(&m->linux->cpuset_cpus, cpuset_cpus);
        if (r >= 0 && cpuset_mems)
                r = set_str(&m->linux->cpuset_mems, cpuset_mems);
        if (r >= 0)
                r = append_checked(&m->base, out, err);
        protobuf_c_message_free_unpacked(&m->base, NULL);
        return r == -ENOMEM ? oom(err) : r;
}

int ncm_cri_request_encode(const ncm_cri_request *q, ncm_buf *out, ncm_error *err)
{
        switch (q->method) {
        case NCM_CRI_VERSION: {
                /* the version the kubelet sends (kubeRuntimeAPIVersion) */
                Runtime__V1__VersionRequest m = RUNTIME__V1__VERSION_REQUEST__INIT;
                m.version = (char *)"0.1.0";
                return ncm__pb_append(&m.base, out) < 0 ? oom(err) : 0;
        }
        case NCM_CRI_LIST_POD_SANDBOX: {
                Runtime__V1__ListPodSandboxRequest m = RUNTIME__V1__LIST_POD_SANDBOX_REQUEST__INIT;
                return ncm__pb_append(&m.base, out) < 0 ? oom(err) : 0;
        }
        case NCM_CRI_LIST_CONTAINERS: {
                Runtime__V1__ListContainersRequest m = RUNTIME__V1__LIST_CONTAINERS_REQUEST__INIT;
                Runtime__V1__ContainerFilter f = RUNTIME__V1__CONTAINER_FILTER__INIT;
                Runtime__V1__ContainerStateValue sv = RUNTIME__V1__CONTAINER_STATE_VALUE__INIT;
                if (q->state >= 0 || q->pod_sandbox_id) {
                        if (q->state >= 0) {
                                sv.state = (Runtime__V1__ContainerState)q->state;
                                f.state = &sv;
                        }
                        if (q->pod_sandbox_id)
                                f.pod_sandbox_id = (char *)q->pod_sandbox_id;
                        m.filter = &f;
                }
                return ncm__pb_append(&m.base, out) < 0 ? oom(err) : 0;
        }
        case NCM_CRI_CONTAINER_STATUS: {
                Runtime__V1__ContainerStatusRequest m = RUNTIME__V1__CONTAINER_STATUS_REQUEST__INIT;
                if (!q->id)
                        return ncm_error_set(err, EINVAL, "ContainerStatus: no container id");
                m.container_id = (char *)q->id;
                return ncm__pb_append(&m.base, out) < 0 ? oom(err) : 0;
        }
        case NCM_CRI_UPDATE_CONTAINER_RESOURCES: {
                Runtime__V1__UpdateContainerResourcesRequest m =
                                RUNTIME__V1__UPDATE_CONTAINER_RESOURCES_REQUEST__INIT;
                Runtime__V1__LinuxContainerResources res =
                                RUNTIME__V1__LINUX_CONTAINER_RESOURCES__INIT;
                if (!q->id)
                        return ncm_error_set(err, EINVAL,
                                             "UpdateContainerResources: no container id");
                m.container_id = (char *)q->id;
                res.cpuset_cpus = (char *)(q->cpuset_cpus ? q->cpuset_cpus : "");
                res.cpuset_mems = (char *)(q->cpuset_mems ? q->cpuset_mems : "");
                m.linux = &res;
                return ncm__pb_append(&m.base, out) < 0 ? oom(err) : 0;
        }
        default:
                return ncm_error_set(err, EINVAL, "%s: not a call the CRI client makes",
                                     ncm_cri_method_path(q->method) ? ncm_cri_method_path(q->method)
                                                                    : "method");
        }
}
