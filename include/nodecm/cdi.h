/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Container Device Interface (CDI, cncf-tags/container-device-interface) as nodecm reads
 * it: spec files, and the registry of the devices they define in the spec directories. A DRA
 * driver (or a device plugin answering Allocate with CDI devices) writes a spec naming each
 * device "vendor.com/class=name" with the device nodes a runtime adds to the container; the
 * kubelet hands the names to the runtime in CreateContainer (ContainerConfig.CDI_devices,
 * field 17; before 1.31 "cdi.k8s.io/..." annotations). nodecm only needs to know where a named
 * device is, so it reads a spec's kind, devices and device nodes (the container edits nodecm
 * does not apply are not read); docs/devices.md, "Device locality", says how a device becomes
 * a PCI function.
 *
 * The rules are CDI's (pkg/cdi, pkg/parser, specs-go): vendor and class names, device names,
 * a spec's cdiVersion and kind, at least one device and no name twice; files ending in .json
 * or .yaml, in each directory in name order, subdirectories skipped; a later directory
 * overrides an earlier one ("/etc/cdi", then "/var/run/cdi"), and the same name twice in one
 * directory is a conflict that leaves the name unresolvable. A spec that does not parse is
 * skipped with its error kept, as CDI's cache does. Where CDI is strict about fields nodecm does
 * not read (unknown keys, container edits), nodecm is not: a newer spec still locates its
 * devices.
 */
#ifndef NODECM_CDI_H
#define NODECM_CDI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nodecm/buf.h>
#include <nodecm/common.h>
#include <nodecm/error.h>

#ifdef __cplusplus
extern "C" {
#endif

/* CDI's default spec directories, lowest priority first. */
#define NCM_CDI_STATIC_DIR "/etc/cdi"
#define NCM_CDI_DYNAMIC_DIR "/var/run/cdi"
/* The prefix of the container annotations that carried CDI names before kubelet 1.31. */
#define NCM_CDI_ANNOTATION_PREFIX "cdi.k8s.io/"
/* Largest spec file read (-EFBIG beyond), and most files read from one directory. */
#define NCM_CDI_SPEC_MAX (4u << 20)
#define NCM_CDI_DIR_FILES_MAX 4096

/*
 * Check a fully qualified device name "VENDOR/CLASS=NAME" as CDI's ParseQualifiedName does:
 * vendor and class start with a letter, end with a letter or digit, and hold letters, digits,
 * '_', '-', '.'; the name starts and ends with a letter or digit and may also hold ':'. 0, or
 * -EINVAL with CDI's text ("unqualified device \"x\", missing vendor", "invalid device
 * \"v/c=-x\": invalid class \"-x\", should start with a letter or digit", ...).
 */
NCM_API int ncm_cdi_check_name(const char *qualified, ncm_error *err);
/* The same for a spec's kind "VENDOR/CLASS". */
NCM_API int ncm_cdi_check_kind(const char *kind, ncm_error *err);

/* A deviceNodes entry. */
typedef struct ncm_cdi_node {
        char *path;      /* where the container sees it ("/dev/dri/renderD128") */
        char *host_path; /* hostPath (0.5.0), NULL when it is PATH on the host too */
        char type;       /* 'c', 'b', 'u', 'p'; 0 when not given */
        int64_t major;   /* -1 when not given */
        int64_t minor;
} ncm_cdi_node;

typedef struct ncm_cdi_device {
        char *name;          /* qualified: "vendor.com/class=name" */
        ncm_cdi_node *nodes; /* its containerEdits.deviceNodes, in spec order */
        size_t n_nodes;
} ncm_cdi_device;

typedef struct ncm_cdi_spec {
        char *version;           /* cdiVersion */
        char *kind;              /* "vendor.com/class" */
        ncm_cdi_device *devices; /* in spec order */
        size_t n_devices;
        ncm_cdi_node *nodes; /* the spec-level containerEdits.deviceNodes (every device's) */
        size_t n_nodes;
} ncm_cdi_spec;

/*
 * Parse a spec (JSON or YAML, as CDI reads both with a YAML decoder). NAME (the file) starts
 * errors: syntax errors "NAME:LINE:COL: ...", field errors "NAME: devices[2].containerEdits.
 * deviceNodes[0].major: expected an integer, got string", CDI's own ("NAME: invalid spec,
 * multiple device \"gpu0\""). At most 65536 devices and 1024 device nodes each. -EINVAL,
 * -ERANGE, -ENOMEM.
 */
NCM_API int ncm_cdi_spec_parse(const char *text, size_t len, const char *name, ncm_cdi_spec **ret,
                               ncm_error *err);
NCM_API ncm_cdi_spec *ncm_cdi_spec_free(ncm_cdi_spec *s);
NCM_DEFINE_AUTOPTR(ncm_cdi_spec, ncm_cdi_spec_free)

/* The devices of the spec directories, resolved as CDI's cache resolves them. */
typedef struct ncm_cdi_registry ncm_cdi_registry;

/*
 * Scan DIRS[0..N) (lowest priority first; NULL and 0: CDI's defaults) under ROOTFD (the
 * machine root: "/" for this one, a fixture's in tests). A missing directory has no specs; one
 * that cannot be read is an error (-errno naming it). Specs that do not parse and names that
 * conflict are kept as errors (ncm_cdi_registry_error), not returned. -ENOMEM.
 */
NCM_API int ncm_cdi_registry_load(int rootfd, const char *const *dirs, size_t n,
                                  ncm_cdi_registry **ret, ncm_error *err);
NCM_API ncm_cdi_registry *ncm_cdi_registry_free(ncm_cdi_registry *r);
NCM_DEFINE_AUTOPTR(ncm_cdi_registry, ncm_cdi_registry_free)

/*
 * A stamp of the spec directories as ncm_cdi_registry_load would scan them: their names and
 * each spec file's name, size, inode and change times, into *RET. 1 when equal stamps mean the
 * same registry, 0 when they may not: a spec is a symbolic link (its target may change unseen)
 * or changed in the last 20ms (a change within the kernel's clock tick keeps the times).
 * -errno as ncm_cdi_registry_load.
 */
NCM_API int ncm_cdi_stamp(int rootfd, const char *const *dirs, size_t n, uint64_t *ret,
                          ncm_error *err);

/*
 * The device QUALIFIED names, or NULL (unknown, or a conflict). *RET_SPEC (may be NULL)
 * receives the spec it comes from (its spec-level device nodes apply too) and *RET_FILE (may
 * be NULL) that spec's file.
 */
NCM_API const ncm_cdi_device *ncm_cdi_registry_find(const ncm_cdi_registry *r,
                                                    const char *qualified,
                                                    const ncm_cdi_spec **ret_spec,
                                                    const char **ret_file);
/* How many devices resolve, and the I-th by name (for listings). */
NCM_API size_t ncm_cdi_registry_num_devices(const ncm_cdi_registry *r) NCM_PURE;
NCM_API const ncm_cdi_device *ncm_cdi_registry_device_at(const ncm_cdi_registry *r, size_t i,
                                                         const ncm_cdi_spec **ret_spec,
                                                         const char **ret_file);
/* The errors met while scanning: how many, and the I-th ("FILE: what"), in scan order. */
NCM_API size_t ncm_cdi_registry_num_errors(const ncm_cdi_registry *r) NCM_PURE;
NCM_API const char *ncm_cdi_registry_error(const ncm_cdi_registry *r, size_t i) NCM_PURE;

#ifdef __cplusplus
}
#endif
#endif
