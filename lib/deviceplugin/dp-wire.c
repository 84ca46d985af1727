/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The device plugin API's messages as the kubelet reads and writes them, without I/O: what a
 * plugin sends is decoded here with the checks grpc-go makes (wire format, UTF-8 of proto3
 * strings) and the kubelet's registration checks; the requests the kubelet sends are encoded
 * here. Everything a plugin controls passes through this file, which has its own fuzz target.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include <nodecm/buf.h>
#include "base/utf8.h"
#include "deviceplugin-v1beta1.pb-c.h"
#include "pb-util.h"
#include "dp-internal.h"

static const uint8_t empty_msg[1];

static const uint8_t *bytes(const uint8_t *data, size_t len)
{
        /* protobuf-c wants a pointer even for an empty message */
        return len ? data : empty_msg;
}

static bool utf8(const char *s)
{
        return !s || ncm__utf8_valid(s, strlen(s));
}

static int unmarshal_error(ncm_error *err, const char *what, bool bad_utf8)
{
        return ncm_error_set(err, EINVAL, "%s: %s", what,
                             bad_utf8 ? "string field contains invalid UTF-8"
                                      : "proto: cannot parse invalid wire-format data");
}

/* ---- RegisterRequest ---- */

void ncm__dp_register_done(ncm__dp_register *r)
{
        free(r->version);
        free(r->endpoint);
        free(r->resource);
        memset(r, 0, sizeof(*r));
}

int ncm__dp_register_decode(const uint8_t *data, size_t len, ncm__dp_register *ret, ncm_error *err)
{
        static const char what[] = "grpc: error unmarshalling request";
        V1beta1__RegisterRequest *m =
                        v1beta1__register_request__unpack(NULL, len, bytes(data, len));
        ncm__dp_register r = {0};
        bool ok;

        if (!m)
                return unmarshal_error(err, what, false);
        ok = utf8(m->version) && utf8(m->endpoint) && utf8(m->resource_name);
        if (ok) {
                r.version = strdup(m->version ? m->version : "");
                r.endpoint = strdup(m->endpoint ? m->endpoint : "");
                r.resource = strdup(m->resource_name ? m->resource_name : "");
        }
        v1beta1__register_request__free_unpacked(m, NULL);
        if (!ok)
                return unmarshal_error(err, what, true);
        if (!r.version || !r.endpoint || !r.resource) {
                ncm__dp_register_done(&r);
                return ncm_error_set(err, ENOMEM, "out of memory");
        }
        *ret = r;
        return 0;
}

int ncm__dp_register_check(const ncm__dp_register *r, size_t dir_len, ncm_error *err)
{
        ncm_buf q = NCM_BUF_INIT;
        int k = 0;

        if (strcmp(r->version, NCM_DEVMGR_API_VERSION) != 0) {
                /* Go's %q of the version, then of the []string of supported versions */
                ncm_buf_go_quote(&q, r->version, strlen(r->version));
                k = ncm_error_set(err, EINVAL,
                                  "requested API version %s is not supported by kubelet. "
                                  "Supported version is [\"%s\"]",
                                  q.data ? q.data : "\"\"", NCM_DEVMGR_API_VERSION);
        } else if ((k = ncm_devmgr_validate_resource_name(r->resource, err)) < 0) {
                ;
        } else if (!r->endpoint[0] || strchr(r->endpoint, '/') || strcmp(r->endpoint, ".") == 0 ||
                   strcmp(r->endpoint, "..") == 0) {
                /*
                 * The kubelet joins the endpoint to its directory as it is (filepath.Join), so
                 * "../../x.sock" dials outside it; kubernetes PR 138382 refuses what is not a
                 * name in the directory, as the API documents the field. nodecm does.
                 */
                ncm_buf_go_quote(&q, r->endpoint, strlen(r->endpoint));
                k = ncm_error_set(err, EINVAL,
                                  "invalid endpoint %s: must be the name of a socket in the device "
                                  "plugin directory",
                                  q.data ? q.data : "\"\"");
        } else if (dir_len + 1 + strlen(r->endpoint) >=
                   sizeof(((struct sockaddr_un *)0)->sun_path)) {
                ncm_buf_go_quote(&q, r->endpoint, strlen(r->endpoint));
                k = ncm_error_set(err, EINVAL,
                                  "invalid endpoint %s: the socket path would be longer than a "
                                  "unix socket path can be",
                                  q.data ? q.data : "\"\"");
        }
        ncm_buf_done(&q);
        return k;
}

/* ---- ListAndWatchResponse ---- */

void ncm__dp_snapshot_done(ncm__dp_snapshot *s)
{
        if (s->msg)
                v1beta1__list_and_watch_response__free_unpacked(s->msg, NULL);
        free(s->devices);
        free(s->numa);
        memset(s, 0, sizeof(*s));
}

int ncm__dp_snapshot_decode(const uint8_t *data, size_t len, ncm__dp_snapshot *ret, ncm_error *err)
{
        static const char what[] = "grpc: failed to unmarshal the received message";
        V1beta1__ListAndWatchResponse *m =
                        v1beta1__list_and_watch_response__unpack(NULL, len, bytes(data, len));
        ncm__dp_snapshot s = {0};
        size_t total = 0, at = 0;

        if (!m)
                return unmarshal_error(err, what, false);
        s.msg = m;
        for (size_t i = 0; i < m->n_devices; i++) {
                const V1beta1__Device *d = m->devices[i];
                if (!utf8(d->id) || !utf8(d->health)) {
                        ncm__dp_snapshot_done(&s);
                        return unmarshal_error(err, what, true);
                }
                if (d->topology)
                        total += d->topology->n_nodes;
        }
        if (m->n_devices && !(s.devices = calloc(m->n_devices, sizeof(*s.devices))))
                goto oom;
        if (total && !(s.numa = malloc(total * sizeof(*s.numa))))
                goto oom;
        for (size_t i = 0; i < m->n_devices; i++) {
                const V1beta1__Device *d = m->devices[i];
                ncm_devmgr_device *o = &s.devices[i];
                /* proto3: an unset string is "" (protobuf-c gives an empty string too) */
                o->id = d->id ? d->id : "";
                o->health = d->health ? d->health : "";
                o->topology = d->topology != NULL;
                if (!d->topology)
                        continue;
                o->numa = s.numa ? s.numa + at : NULL;
                o->n_numa = d->topology->n_nodes;
                for (size_t k = 0; k < d->topology->n_nodes; k++)
                        s.numa[at++] = d->topology->nodes[k]->id;
        }
        s.n = m->n_devices;
        *ret = s;
        return 0;
oom:
        ncm__dp_snapshot_done(&s);
        return ncm_error_set(err, ENOMEM, "out of memory");
}

/* ---- DevicePluginOptions ---- */

int ncm__dp_options_decode(const uint8_t *data, size_t len, ncm_devmgr_plugin_options *ret,
                           ncm_error *err)
{
        V1beta1__DevicePluginOptions *m =
                        v1beta1__device_plugin_options__unpack(NULL, len, bytes(data, len));
        if (!m)
                return unmarshal_error(err, "grpc: failed to unmarshal the received message",
                                       false);
        ret->pre_start_required = m->pre_start_required;
        ret->get_preferred_allocation_available = m->get_preferred_allocation_available;
        v1beta1__device_plugin_options__free_unpacked(m, NULL);
        return 0;
}

/* ---- PreferredAllocationResponse ---- */

int ncm__dp_preferred_decode(const uint8_t *data, size_t len, char ***ret, size_t *ret_n,
                             ncm_error *err)
{
        static const char what[] = "grpc: failed to unmarshal the received message";
        V1beta1__PreferredAllocationResponse *m =
                        v1beta1__preferred_allocation_response__unpack(NULL, len, bytes(data, len));
        const V1beta1__ContainerPreferredAllocationResponse *c;
        char **ids = NULL;
        bool ok = true;

        if (!m)
                return unmarshal_error(err, what, false);
        for (size_t i = 0; i < m->n_container_responses && ok; i++)
                for (size_t k = 0; k < m->container_responses[i]->n_deviceids && ok; k++)
                        ok = utf8(m->container_responses[i]->deviceids[k]);
        if (!ok) {
                v1beta1__preferred_allocation_response__free_unpacked(m, NULL);
                return unmarshal_error(err, what, true);
        }
        /*
         * The kubelet reads container_responses[0] without checking there is one (it would
         * panic); nodecm takes "no answer" as no preference.
         */
        c = m->n_container_responses ? m->container_responses[0] : NULL;
        if (c && c->n_deviceids) {
                ids = calloc(c->n_deviceids, sizeof(*ids));
                for (size_t k = 0; ids && k < c->n_deviceids; k++)
                        if (!(ids[k] = strdup(c->deviceids[k] ? c->deviceids[k] : ""))) {
                                for (size_t j = 0; j < k; j++)
                                        free(ids[j]);
                                free(ids);
                                ids = NULL;
                        }
                if (!ids) {
                        v1beta1__preferred_allocation_response__free_unpacked(m, NULL);
                        return ncm_error_set(err, ENOMEM, "out of memory");
                }
        }
        *ret = ids;
        *ret_n = c ? c->n_deviceids : 0;
        v1beta1__preferred_allocation_response__free_unpacked(m, NULL);
        return 0;
}

/* ---- AllocateResponse ---- */

/* A varint at *P (below END): 0 and *V, or -1. */
static int varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
        uint64_t x = 0;
        for (unsigned shift = 0; shift < 64 && *p < end; shift += 7) {
                uint8_t b = *(*p)++;
                x |= (uint64_t)(b & 0x7f) << shift;
                if (!(b & 0x80)) {
                        *v = x;
                        return 0;
                }
        }
        return -1;
}

/*
 * The bytes of the first occurrence of field 1 (length-delimited) in DATA, which protobuf-c
 * has accepted already: *RET_AT / *RET_LEN, or 0 when there is none.
 */
static int first_field1(const uint8_t *data, size_t len, const uint8_t **ret_at, size_t *ret_len)
{
        const uint8_t *p = data, *end = data + len;

        while (p < end) {
                uint64_t key, n;
                if (varint(&p, end, &key) < 0)
                        return -1;
                switch (key & 7) {
                case 0:
                        if (varint(&p, end, &n) < 0)
                                return -1;
                        break;
                case 1:
                        if ((size_t)(end - p) < 8)
                                return -1;
                        p += 8;
                        break;
                case 5:
                        if ((size_t)(end - p) < 4)
                                return -1;
                        p += 4;
                        break;
                case 2:
                        if (varint(&p, end, &n) < 0 || n > (uint64_t)(end - p))
                                return -1;
                        if ((key >> 3) == 1) {
                                *ret_at = p;
                                *ret_len = (size_t)n;
                                return 1;
                        }
                        p += n;
                        break;
                default:
                        return -1;
                }
        }
        return 0;
}

int ncm__dp_allocate_decode(const uint8_t *data, size_t len, ncm_devmgr_alloc_resp **ret,
                            ncm_error *err)
{
        static const char what[] = "grpc: failed to unmarshal the received message";
        V1beta1__AllocateResponse *m =
                        v1beta1__allocate_response__unpack(NULL, len, bytes(data, len));
        const uint8_t *at = NULL;
        size_t n = 0;
        int k;

        if (!m)
                return unmarshal_error(err, what, false);
        v1beta1__allocate_response__free_unpacked(m, NULL);
        k = first_field1(bytes(data, len), len, &at, &n);
        if (k < 0)
                return unmarshal_error(err, what, false);
        if (k == 0) {
                *ret = NULL;
                return 0;
        }
        k = ncm_devmgr_alloc_resp_decode(at, n, ret, err);
        if (k == -EINVAL)
                return unmarshal_error(err, what, strstr(err ? err->msg : "", "UTF-8") != NULL);
        return k;
}

/* ---- requests ---- */

int ncm__dp_allocate_request(const char *const *ids, size_t n, uint8_t **ret, size_t *ret_len)
{
        V1beta1__ContainerAllocateRequest c = V1BETA1__CONTAINER_ALLOCATE_REQUEST__INIT;
        V1beta1__ContainerAllocateRequest *cv[1] = {&c};
        V1beta1__AllocateRequest r = V1BETA1__ALLOCATE_REQUEST__INIT;

        c.n_devices_ids = n;
        c.devices_ids = (char **)ids;
        r.n_container_requests = 1;
        r.container_requests = cv;
        return ncm__pb_pack(&r.base, ret, ret_len);
}

int ncm__dp_preferred_request(const char *const *available, size_t n_available,
                              const char *const *must_include, size_t n_must, int32_t size,
                              uint8_t **ret, size_t *ret_len)
{
        V1beta1__ContainerPreferredAllocationRequest c =
                        V1BETA1__CONTAINER_PREFERRED_ALLOCATION_REQUEST__INIT;
        V1beta1__ContainerPreferredAllocationRequest *cv[1] = {&c};
        V1beta1__PreferredAllocationRequest r = V1BETA1__PREFERRED_ALLOCATION_REQUEST__INIT;

        c.n_available_deviceids = n_available;
        c.available_deviceids = (char **)available;
        c.n_must_include_deviceids = n_must;
        c.must_include_deviceids = (char **)must_include;
        c.allocation_size = size;
        r.n_container_requests = 1;
        r.container_requests = cv;
        return ncm__pb_pack(&r.base, ret, ret_len);
}

int ncm__dp_pre_start_request(const char *const *ids, size_t n, uint8_t **ret, size_t *ret_len)
{
        V1beta1__PreStartContainerRequest r = V1BETA1__PRE_START_CONTAINER_REQUEST__INIT;

        r.n_devices_ids = n;
        r.devices_ids = (char **)ids;
        return ncm__pb_pack(&r.base, ret, ret_len);
}

/* ---- grpc-go's error texts ---- */

const char *ncm__dp_go_code(int code)
{
        static const char *const names[] = {
                        "OK",
                        "Canceled",
                        "Unknown",
                        "InvalidArgument",
                        "DeadlineExceeded",
                        "NotFound",
                        "AlreadyExists",
                        "PermissionDenied",
                        "ResourceExhausted",
                        "FailedPrecondition",
                        "Aborted",
                        "OutOfRange",
                        "Unimplemented",
                        "Internal",
                        "Unavailable",
                        "DataLoss",
                        "Unauthenticated",
        };
        if (code >= 0 && (size_t)code < sizeof(names) / sizeof(names[0]))
                return names[code];
        return "Unknown";
}

void ncm__dp_rpc_error(ncm_buf *out, int code, const char *message, bool own_deadline)
{
        if (own_deadline && code == NCM_RPC_DEADLINE_EXCEEDED)
                message = "context deadline exceeded";
        ncm_buf_printf(out, "rpc error: code = %s desc = %s", ncm__dp_go_code(code),
                       message ? message : "");
}
