/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internal: the device plugin API's messages as the host reads and writes them, without I/O
 * (dp-wire.c, fuzzed by tests/fuzz/fuzz-deviceplugin.c), and the host's shared structures.
 */
#ifndef NCM_DEVICEPLUGIN_INTERNAL_H
#define NCM_DEVICEPLUGIN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nodecm/deviceplugin.h>
#include <nodecm/devicemanager.h>
#include <nodecm/error.h>

/* ---- messages (dp-wire.c) ---- */

/* A RegisterRequest. Strings are malloc'd, never NULL. */
typedef struct ncm__dp_register {
        char *version;
        char *endpoint;
        char *resource;
} ncm__dp_register;

void ncm__dp_register_done(ncm__dp_register *r);

/*
 * Decode a RegisterRequest as grpc-go does (malformed bytes or strings that are not UTF-8:
 * -EINVAL, "grpc: error unmarshalling request: ..."). The options in it are ignored, as by
 * the kubelet (it asks GetDevicePluginOptions).
 */
int ncm__dp_register_decode(const uint8_t *data, size_t len, ncm__dp_register *ret, ncm_error *err);

/*
 * The kubelet's checks of a registration, in its order and with its texts: the version
 * (`requested API version "v1alpha" is not supported by kubelet. Supported version is
 * ["v1beta1"]`), the resource name (`the ResourceName "x" is invalid`), then nodecm's own:
 * the endpoint must be a socket name in the directory (not empty, no '/', not "." or "..",
 * short enough for a unix socket path under DIR of DIR_LEN bytes). -EINVAL.
 */
int ncm__dp_register_check(const ncm__dp_register *r, size_t dir_len, ncm_error *err);

/* A ListAndWatchResponse as the device manager takes it. */
typedef struct ncm__dp_snapshot {
        ncm_devmgr_device *devices;
        size_t n;
        void *msg;     /* the decoded message (owns the strings) */
        int64_t *numa; /* every device's NUMA ids, one block */
} ncm__dp_snapshot;

void ncm__dp_snapshot_done(ncm__dp_snapshot *s);

/* Decode a ListAndWatchResponse (-EINVAL "grpc: failed to unmarshal the received message: ..."
 * for what grpc-go refuses). */
int ncm__dp_snapshot_decode(const uint8_t *data, size_t len, ncm__dp_snapshot *ret, ncm_error *err);

/* DevicePluginOptions. -EINVAL for garbage. */
int ncm__dp_options_decode(const uint8_t *data, size_t len, ncm_devmgr_plugin_options *ret,
                           ncm_error *err);

/* PreferredAllocationResponse: container_responses[0].deviceIDs (none: NULL / 0). */
int ncm__dp_preferred_decode(const uint8_t *data, size_t len, char ***ret, size_t *ret_n,
                             ncm_error *err);

/*
 * AllocateResponse: container_responses[0] as the device manager keeps it (NULL when the
 * plugin sent no container response). The whole message is checked first, as Go unmarshals
 * it whole.
 */
int ncm__dp_allocate_decode(const uint8_t *data, size_t len, ncm_devmgr_alloc_resp **ret,
                            ncm_error *err);

/* Requests, as the kubelet sends them: one container request. *RET malloc'd. 0 or -ENOMEM. */
int ncm__dp_allocate_request(const char *const *ids, size_t n, uint8_t **ret, size_t *ret_len);
int ncm__dp_preferred_request(const char *const *available, size_t n_available,
                              const char *const *must_include, size_t n_must, int32_t size,
                              uint8_t **ret, size_t *ret_len);
int ncm__dp_pre_start_request(const char *const *ids, size_t n, uint8_t **ret, size_t *ret_len);

/* grpc-go's name of a status code ("Unknown", "DeadlineExceeded", "Canceled", ...). */
const char *ncm__dp_go_code(int code);

/*
 * The error text a grpc-go client returns for a call that ended with CODE and MESSAGE:
 * "rpc error: code = Unknown desc = MESSAGE"; our own deadline reads as Go's context
 * deadline ("context deadline exceeded").
 */
void ncm__dp_rpc_error(ncm_buf *out, int code, const char *message, bool own_deadline);

#endif
