/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reading a KubeletConfiguration document as the kubelet's codec reads it
 * (pkg/kubelet/kubeletconfig/util/codec DecodeKubeletConfiguration), before any field is
 * parsed.
 *
 * The kubelet decodes strictly first: sigs.k8s.io/yaml's YAMLToJSONStrict (go-yaml v2
 * UnmarshalStrict: a repeated key is "key ... already set in map") and sigs.k8s.io/json's
 * UnmarshalStrict (an unknown field, or a repeated one, in JSON). Both are case-sensitive:
 * "CPUManagerPolicy" is not cpuManagerPolicy, it is an unknown field (json-iterator's
 * case-insensitive matching is long gone from apimachinery's serializer). When the only errors
 * are such strict ones (runtime.IsStrictDecodingError), the kubelet decodes again leniently
 * (UnmarshalCaseSensitivePreserveInts over YAMLToJSON's output: unknown fields dropped, a
 * repeated YAML key's last value, a repeated JSON object merged as encoding/json merges), logs
 * "Using lenient decoding as strict decoding failed" and starts. Any other error (a wrong
 * type, a missing kind) is fatal.
 *
 * nodecm does the same: in lenient mode (a kubelet file's default) every strict error becomes
 * a warning naming the field and what the kubelet does with it, and the configuration is the
 * lenient one; in strict mode (a scenario's default, a setting away elsewhere) they refuse the
 * configuration with the kubelet's strict texts, joined as its aggregate joins them.
 *
 * Which fields exist depends on the kubelet release: a field newer than the chosen generation
 * is unknown to it, so it is warned about and not read. The table is v1beta1's
 * (staging/src/k8s.io/kubelet/config/v1beta1/types.go) with the release that added each field
 * since 1.32; nested structs whose members are listed are checked too, others are taken whole.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <nodecm/buf.h>
#include "base/json.h"
#include "node-internal.h"

typedef struct field {
        const char *name;
        int since;                   /* minor release that added it, 0: before 1.32 */
        const struct field *members; /* an object's (or a list's objects') fields, or NULL */
        bool list;                   /* a list of such objects */
} field;

#define END                                                                                        \
        {                                                                                          \
                NULL, 0, NULL, false                                                               \
        }

static const field f_x509[] = {{"clientCAFile", 0, NULL, false}, END};
static const field f_authn_webhook[] = {
                {"enabled", 0, NULL, false}, {"cacheTTL", 0, NULL, false}, END};
static const field f_anonymous[] = {{"enabled", 0, NULL, false}, END};
static const field f_authentication[] = {{"x509", 0, f_x509, false},
                                         {"webhook", 0, f_authn_webhook, false},
                                         {"anonymous", 0, f_anonymous, false},
                                         END};
static const field f_authz_webhook[] = {{"cacheAuthorizedTTL", 0, NULL, false},
                                        {"cacheUnauthorizedTTL", 0, NULL, false},
                                        END};
static const field f_authorization[] = {
                {"mode", 0, NULL, false}, {"webhook", 0, f_authz_webhook, false}, END};
static const field f_memory_swap[] = {{"swapBehavior", 0, NULL, false}, END};
static const field f_crash_loop[] = {{"maxContainerRestartPeriod", 0, NULL, false}, END};
static const field f_userns[] = {{"idsPerPod", 0, NULL, false}, END};
static const field f_tracing[] = {
                {"endpoint", 0, NULL, false}, {"samplingRatePerMillion", 0, NULL, false}, END};
static const field f_output[] = {
                {"splitStream", 0, NULL, false}, {"infoBufferSize", 0, NULL, false}, END};
static const field f_log_options[] = {
                {"text", 0, f_output, false}, {"json", 0, f_output, false}, END};
static const field f_vmodule[] = {
                {"filePattern", 0, NULL, false}, {"verbosity", 0, NULL, false}, END};
static const field f_logging[] = {
                {"format", 0, NULL, false},           {"flushFrequency", 0, NULL, false},
                {"verbosity", 0, NULL, false},        {"vmodule", 0, f_vmodule, true},
                {"options", 0, f_log_options, false}, END};
static const field f_shutdown_prio[] = {
                {"priority", 0, NULL, false}, {"shutdownGracePeriodSeconds", 0, NULL, false}, END};
static const field f_reserved_memory[] = {
                {"numaNode", 0, NULL, false}, {"limits", 0, NULL, false}, END};
static const field f_taint[] = {{"key", 0, NULL, false},
                                {"value", 0, NULL, false},
                                {"effect", 0, NULL, false},
                                {"timeAdded", 0, NULL, false},
                                END};

/* KubeletConfiguration v1beta1, in types.go's order. */
static const field kubelet_fields[] = {
                {"kind", 0, NULL, false},
                {"apiVersion", 0, NULL, false},
                {"enableServer", 0, NULL, false},
                {"staticPodPath", 0, NULL, false},
                {"podLogsDir", 0, NULL, false},
                {"syncFrequency", 0, NULL, false},
                {"fileCheckFrequency", 0, NULL, false},
                {"httpCheckFrequency", 0, NULL, false},
                {"staticPodURL", 0, NULL, false},
                {"staticPodURLHeader", 0, NULL, false},
                {"address", 0, NULL, false},
                {"port", 0, NULL, false},
                {"readOnlyPort", 0, NULL, false},
                {"tlsCertFile", 0, NULL, false},
                {"tlsPrivateKeyFile", 0, NULL, false},
                {"tlsCipherSuites", 0, NULL, false},
                {"tlsMinVersion", 0, NULL, false},
                {"tlsCurvePreferences", 0, NULL, false},
                {"rotateCertificates", 0, NULL, false},
                {"serverTLSBootstrap", 0, NULL, false},
                {"authentication", 0, f_authentication, false},
                {"authorization", 0, f_authorization, false},
                {"registryPullQPS", 0, NULL, false},
                {"registryBurst", 0, NULL, false},
                {"imagePullCredentialsVerificationPolicy", 33, NULL, false},
                {"preloadedImagesVerificationAllowlist", 33, NULL, false},
                {"eventRecordQPS", 0, NULL, false},
                {"eventBurst", 0, NULL, false},
                {"enableDebuggingHandlers", 0, NULL, false},
                {"enableContentionProfiling", 0, NULL, false},
                {"healthzPort", 0, NULL, false},
                {"healthzBindAddress", 0, NULL, false},
                {"oomScoreAdj", 0, NULL, false},
                {"clusterDomain", 0, NULL, false},
                {"clusterDNS", 0, NULL, false},
                {"streamingConnectionIdleTimeout", 0, NULL, false},
                {"nodeStatusUpdateFrequency", 0, NULL, false},
                {"nodeStatusReportFrequency", 0, NULL, false},
                {"nodeLeaseDurationSeconds", 0, NULL, false},
                {"imageMinimumGCAge", 0, NULL, false},
                {"imageMaximumGCAge", 0, NULL, false},
                {"imageGCHighThresholdPercent", 0, NULL, false},
                {"imageGCLowThresholdPercent", 0, NULL, false},
                {"volumeStatsAggPeriod", 0, NULL, false},
                {"kubeletCgroups", 0, NULL, false},
                {"systemCgroups", 0, NULL, false},
                {"cgroupRoot", 0, NULL, false},
                {"cgroupsPerQOS", 0, NULL, false},
                {"cgroupDriver", 0, NULL, false},
                {"cpuManagerPolicy", 0, NULL, false},
                {"singleProcessOOMKill", 32, NULL, false},
                {"cpuManagerPolicyOptions", 0, NULL, false},
                {"cpuManagerReconcilePeriod", 0, NULL, false},
                {"memoryManagerPolicy", 0, NULL, false},
                {"topologyManagerPolicy", 0, NULL, false},
                {"topologyManagerScope", 0, NULL, false},
                {"topologyManagerPolicyOptions", 0, NULL, false},
                {"qosReserved", 0, NULL, false},
                {"runtimeRequestTimeout", 0, NULL, false},
                {"hairpinMode", 0, NULL, false},
                {"maxPods", 0, NULL, false},
                {"podCIDR", 0, NULL, false},
                {"podPidsLimit", 0, NULL, false},
                {"resolvConf", 0, NULL, false},
                {"cpuCFSQuota", 0, NULL, false},
                {"cpuCFSQuotaPeriod", 0, NULL, false},
                {"nodeStatusMaxImages", 0, NULL, false},
                {"maxOpenFiles", 0, NULL, false},
                {"contentType", 0, NULL, false},
                {"kubeAPIQPS", 0, NULL, false},
                {"kubeAPIBurst", 0, NULL, false},
                {"serializeImagePulls", 0, NULL, false},
                {"maxParallelImagePulls", 0, NULL, false},
                {"evictionHard", 0, NULL, false},
                {"evictionSoft", 0, NULL, false},
                {"evictionSoftGracePeriod", 0, NULL, false},
                {"evictionPressureTransitionPeriod", 0, NULL, false},
                {"evictionMaxPodGracePeriod", 0, NULL, false},
                {"evictionMinimumReclaim", 0, NULL, false},
                {"mergeDefaultEvictionSettings", 34, NULL, false},
                {"podsPerCore", 0, NULL, false},
                {"enableControllerAttachDetach", 0, NULL, false},
                {"protectKernelDefaults", 0, NULL, false},
                {"makeIPTablesUtilChains", 0, NULL, false},
                {"iptablesMasqueradeBit", 0, NULL, false},
                {"iptablesDropBit", 0, NULL, false},
                {"featureGates", 0, NULL, false},
                {"failSwapOn", 0, NULL, false},
                {"memorySwap", 0, f_memory_swap, false},
                {"containerLogMaxSize", 0, NULL, false},
                {"containerLogMaxFiles", 0, NULL, false},
                {"containerLogMaxWorkers", 0, NULL, false},
                {"containerLogMonitorInterval", 0, NULL, false},
                {"configMapAndSecretChangeDetectionStrategy", 0, NULL, false},
                {"systemReserved", 0, NULL, false},
                {"kubeReserved", 0, NULL, false},
                {"reservedSystemCPUs", 0, NULL, false},
                {"showHiddenMetricsForVersion", 0, NULL, false},
                {"systemReservedCgroup", 0, NULL, false},
                {"kubeReservedCgroup", 0, NULL, false},
                {"enforceNodeAllocatable", 0, NULL, false},
                {"allowedUnsafeSysctls", 0, NULL, false},
                {"volumePluginDir", 0, NULL, false},
                {"providerID", 0, NULL, false},
                {"kernelMemcgNotification", 0, NULL, false},
                {"logging", 0, f_logging, false},
                {"enableSystemLogHandler", 0, NULL, false},
                {"enableSystemLogQuery", 0, NULL, false},
                {"shutdownGracePeriod", 0, NULL, false},
                {"shutdownGracePeriodCriticalPods", 0, NULL, false},
                {"shutdownGracePeriodByPodPriority", 0, f_shutdown_prio, true},
                {"crashLoopBackOff", 32, f_crash_loop, false},
                {"reservedMemory", 0, f_reserved_memory, true},
                {"enableProfilingHandler", 0, NULL, false},
                {"enableDebugFlagsHandler", 0, NULL, false},
                {"seccompDefault", 0, NULL, false},
                {"memoryThrottlingFactor", 0, NULL, false},
                {"registerWithTaints", 0, f_taint, true},
                {"registerNode", 0, NULL, false},
                {"tracing", 0, f_tracing, false},
                {"localStorageCapacityIsolation", 0, NULL, false},
                {"containerRuntimeEndpoint", 0, NULL, false},
                {"imageServiceEndpoint", 0, NULL, false},
                {"failCgroupV1", 0, NULL, false},
                {"userNamespaces", 0, f_userns, false},
                {"memoryReservationPolicy", 36, NULL, false},
                END,
};

/*
 * nodecm's own top-level fields: not the kubelet's (a kubelet would ignore them), never warned
 * about. A module that adds one lists it here.
 */
static const char *const nodecm_fields[] = {
                "kubeletVersion",
                "rootDirectory",
                "enforcement",
                "nodecmd",
                "fitAdmission",
                "isolatedCPUs",
                "irqBalanceConfigFile",
                "deviceLocalCPUs",
                "draTopologyHints",
                "cdiSpecDirs",
                "devicePCI",
                "cpusetMems",
                NULL,
};

bool ncm__node_config_is_nodecm_field(const char *name)
{
        for (size_t i = 0; nodecm_fields[i]; i++)
                if (strcmp(name, nodecm_fields[i]) == 0)
                        return true;
        return false;
}

static const field *find_field(const field *set, const char *name)
{
        for (; set->name; set++)
                if (strcmp(set->name, name) == 0)
                        return set;
        return NULL;
}

static const field *find_field_ci(const field *set, const char *name)
{
        for (; set->name; set++)
                if (strcasecmp(set->name, name) == 0)
                        return set;
        return NULL;
}

static int edit_distance(const char *a, const char *b)
{
        size_t la = strlen(a), lb = strlen(b);
        int row[64];

        if (la >= 63 || lb >= 63)
                return 99;
        for (size_t j = 0; j <= lb; j++)
                row[j] = (int)j;
        for (size_t i = 1; i <= la; i++) {
                int prev = row[0];
                row[0] = (int)i;
                for (size_t j = 1; j <= lb; j++) {
                        int cur = row[j];
                        int best = prev + (a[i - 1] != b[j - 1]);
                        if (row[j] + 1 < best)
                                best = row[j] + 1;
                        if (row[j - 1] + 1 < best)
                                best = row[j - 1] + 1;
                        row[j] = best;
                        prev = cur;
                }
        }
        return row[lb];
}

/*
 * The closest field of SET within an edit distance of 2 (a probable typo), or NULL. At the top
 * level nodecm's own fields are candidates too: "deviceLocalCPU" is a typo of one of them.
 */
static const char *near_field(const field *set, const char *name)
{
        const char *best = NULL;
        int bd = 3;

        if (strlen(name) <= 6)
                return NULL;
        for (const field *f = set; f->name; f++) {
                int d = edit_distance(name, f->name);
                if (d < bd) {
                        bd = d;
                        best = f->name;
                }
        }
        for (size_t i = 0; set == kubelet_fields && nodecm_fields[i]; i++) {
                int d = edit_distance(name, nodecm_fields[i]);
                if (d < bd) {
                        bd = d;
                        best = nodecm_fields[i];
                }
        }
        return best;
}

typedef struct decode {
        ncm_node_config *c;
        int minor; /* the chosen kubelet's minor release */
        bool strict;
        ncm_buf errs; /* strict decoding errors, ", "-joined as the kubelet's aggregate */
        ncm_error *err;
        int r;
} decode;

static const char *const lenient_note = "the kubelet ignores it (lenient decoding, after "
                                        "strict decoding failed)";

/* An unknown field PATH (KEY at its end) of the member set SET. */
static void unknown(decode *d, const field *set, const char *path, const char *key,
                    const field *newer)
{
        const field *ci = find_field_ci(set, key);
        const char *near = ci ? NULL : near_field(set, key);
        char hint[160] = "";

        if (d->r < 0)
                return;
        if (newer)
                snprintf(hint, sizeof(hint), " (kubelet 1.%d has no such field: it came in 1.%d)",
                         d->minor, newer->since);
        else if (ci)
                snprintf(hint, sizeof(hint),
                         " (the kubelet's decoder is case-sensitive: it does not read it as "
                         "\"%s\")",
                         ci->name);
        else if (near)
                snprintf(hint, sizeof(hint), " (did you mean \"%s\"?)", near);
        if (d->strict) {
                ncm_buf_printf(&d->errs, "%sunknown field \"%s\"%s", d->errs.len ? ", " : "", path,
                               hint);
                return;
        }
        d->r = ncm__node_config_warn(d->c, d->err, "%s%sunknown field \"%s\"%s: %s",
                                     d->c->path[0] ? d->c->path : "", d->c->path[0] ? ": " : "",
                                     path, hint, lenient_note);
}

static void check_members(decode *d, json_object *o, const field *set, const char *prefix,
                          int depth);

static void check_value(decode *d, json_object *v, const field *f, const char *path, int depth)
{
        if (!v || !f->members || depth > 8)
                return;
        if (f->list) {
                if (!json_object_is_type(v, json_type_array))
                        return;
                for (size_t i = 0; i < json_object_array_length(v); i++) {
                        char p[560];
                        (void)!snprintf(p, sizeof(p), "%.500s[%zu]", path, i);
                        check_members(d, json_object_array_get_idx(v, i), f->members, p, depth + 1);
                }
                return;
        }
        check_members(d, v, f->members, path, depth + 1);
}

static void check_members(decode *d, json_object *o, const field *set, const char *prefix,
                          int depth)
{
        if (!o || !json_object_is_type(o, json_type_object))
                return;
        json_object_object_foreach(o, key, val)
        {
                const field *f = find_field(set, key);
                char path[512];

                (void)!snprintf(path, sizeof(path), "%.300s%s%.200s", prefix, prefix[0] ? "." : "",
                                key);
                if (depth == 0 && ncm__node_config_is_nodecm_field(key))
                        continue;
                if (!f) {
                        unknown(d, set, path, key, NULL);
                        continue;
                }
                if (f->since > d->minor) {
                        unknown(d, set, path, key, f);
                        continue;
                }
                check_value(d, val, f, path, depth);
        }
}

/* The minor release of the kubelet O asks for (its kubeletVersion), else the default's. */
static int chosen_minor(json_object *o)
{
        json_object *v = ncm__json_get(o, "kubeletVersion");
        ncm_kubelet_version kv = NCM_KUBELET_VERSION_DEFAULT;

        if (v && json_object_is_type(v, json_type_string))
                (void)ncm_kubelet_version_parse(json_object_get_string(v), &kv, NULL);
        if (kv.major == 0)
                return NCM_KUBELET_DEFAULT_MINOR;
        return kv.minor;
}

int ncm__node_config_decode(ncm_node_config *c, json_object *o, const ncm_json_info *info,
                            json_object **ret_view, ncm_error *err)
{
        decode d = {.c = c, .strict = c->decoding == NCM_NODE_CONFIG_STRICT, .err = err};
        json_object *view = NULL;

        d.minor = chosen_minor(o);
        if (info && info->more) {
                d.r = ncm__node_config_warn(c, err,
                                            "line %zu: a second YAML document: the kubelet reads "
                                            "the first one only and ignores the rest",
                                            info->more_line);
                c->n_doc_warnings = c->n_warnings;
        }
        /* repeats first: YAMLToJSONStrict's error comes before the JSON pass's */
        for (size_t i = 0; info && i < info->n_dups && d.r >= 0; i++) {
                const ncm_json_dup *dup = &info->dups[i];
                const char *key = strrchr(dup->path, '.');
                key = key ? key + 1 : dup->path;
                if (d.strict && info->yaml)
                        ncm_buf_printf(&d.errs, "%sline %zu: key \"%s\" already set in map",
                                       d.errs.len ? ", " : "", dup->line, key);
                else if (d.strict)
                        ncm_buf_printf(&d.errs, "%sduplicate field \"%s\"", d.errs.len ? ", " : "",
                                       dup->path);
                else if (info->yaml)
                        d.r = ncm__node_config_warn(
                                        c, err,
                                        "line %zu: key \"%s\"%s%s%s already set in map: the "
                                        "kubelet keeps the last value (lenient decoding, after "
                                        "strict decoding failed)",
                                        dup->line, key, key == dup->path ? "" : " (",
                                        key == dup->path ? "" : dup->path,
                                        key == dup->path ? "" : ")");
                else
                        d.r = ncm__node_config_warn(
                                        c, err,
                                        "line %zu: duplicate field \"%s\": the kubelet decodes "
                                        "both, as Go does (an object merged into the earlier "
                                        "one, anything else replaced; lenient decoding, after "
                                        "strict decoding failed)",
                                        dup->line, dup->path);
        }
        if (d.r >= 0)
                c->n_doc_warnings = c->n_warnings;
        if (d.r >= 0)
                check_members(&d, o, kubelet_fields, "", 0);
        if (d.r >= 0 && ncm_buf_failed(&d.errs))
                d.r = ncm_error_set(err, ENOMEM, "out of memory");
        if (d.r >= 0 && d.errs.len)
                d.r = ncm_error_set(err, EINVAL,
                                    "%s%sstrict decoding error: %s (the kubelet would decode it "
                                    "leniently and start; nodecm does with --config-decoding "
                                    "lenient)",
                                    c->path[0] ? c->path : "", c->path[0] ? ": " : "", d.errs.data);
        ncm_buf_done(&d.errs);
        if (d.r < 0)
                return d.r;
        /* a field newer than the chosen kubelet is not read: it is not there for it */
        json_object_object_foreach(o, key, val)
        {
                const field *f = find_field(kubelet_fields, key);
                if (!f || f->since <= d.minor)
                        continue;
                if (!view) {
                        view = json_object_new_object();
                        if (!view)
                                return ncm_error_set(err, ENOMEM, "out of memory");
                        json_object_object_foreach(o, k2, v2)
                        {
                                if (json_object_object_add(view, k2,
                                                           v2 ? json_object_get(v2) : NULL) < 0) {
                                        json_object_put(view);
                                        return ncm_error_set(err, ENOMEM, "out of memory");
                                }
                        }
                }
                (void)val;
                json_object_object_del(view, key);
        }
        *ret_view = view ? view : json_object_get(o);
        return 0;
}

/* --- kind, apiVersion and the document as a whole --- */

#define KUBELET_GROUP_VERSION "kubelet.config.k8s.io/v1beta1"

/* The document's compact JSON for a message, cut to fit. */
static void doc_text(json_object *o, char *buf, size_t size)
{
        const char *t = o ? json_object_to_json_string_ext(
                                            o,
                                            JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
                          : "null";
        size_t n = strlen(t);

        if (n < size) {
                memcpy(buf, t, n + 1);
                return;
        }
        memcpy(buf, t, size - 4);
        memcpy(buf + size - 4, "...", 4);
}

int ncm__node_config_check_kind(json_object *o, bool required, ncm_error *err)
{
        json_object *kind = ncm__json_get(o, "kind");
        json_object *av = ncm__json_get(o, "apiVersion");
        char text[160];

        if (!o || !json_object_is_type(o, json_type_object)) {
                doc_text(o, text, sizeof(text));
                if (o && !json_object_is_type(o, json_type_null))
                        return ncm_error_set(err, EINVAL,
                                             "failed to decode: couldn't get version/kind; json "
                                             "parse error: json: cannot unmarshal %s into Go "
                                             "value of type struct { APIVersion string "
                                             "\"json:\\\"apiVersion,omitempty\\\"\"; Kind string "
                                             "\"json:\\\"kind,omitempty\\\"\" }",
                                             json_object_is_type(o, json_type_array) ? "array"
                                                                                     : "scalar");
                return ncm_error_set(err, EINVAL,
                                     "failed to decode: Object 'Kind' is missing in '%s' (an "
                                     "empty configuration: the kubelet refuses to start)",
                                     text);
        }
        if (!kind && !av && !required)
                return 0;
        if ((kind && !json_object_is_type(kind, json_type_string)) ||
            (av && !json_object_is_type(av, json_type_string)))
                return ncm_error_set(
                                err, EINVAL,
                                "failed to decode: couldn't get version/kind; json parse "
                                "error: json: cannot unmarshal %s into Go struct field "
                                ".%s of type string",
                                ncm__json_type_name(
                                                kind && !json_object_is_type(kind, json_type_string)
                                                                ? kind
                                                                : av),
                                kind && !json_object_is_type(kind, json_type_string)
                                                ? "kind"
                                                : "apiVersion");
        if (!kind || !json_object_get_string_len(kind)) {
                doc_text(o, text, sizeof(text));
                return ncm_error_set(err, EINVAL,
                                     "failed to decode: Object 'Kind' is missing in '%s'", text);
        }
        if (!av || !json_object_get_string_len(av)) {
                doc_text(o, text, sizeof(text));
                return ncm_error_set(err, EINVAL,
                                     "failed to decode: Object 'apiVersion' is missing in '%s'",
                                     text);
        }
        /* only v1beta1 is registered (pkg/kubelet/apis/config/scheme): v1, v1alpha1 and any
         * other group or kind are unknown to the kubelet's scheme */
        if (strcmp(json_object_get_string(av), KUBELET_GROUP_VERSION) != 0 ||
            strcmp(json_object_get_string(kind), "KubeletConfiguration") != 0)
                return ncm_error_set(err, EINVAL,
                                     "failed to decode: no kind \"%s\" is registered for version "
                                     "\"%s\" in scheme \"pkg/kubelet/apis/config/scheme/"
                                     "scheme.go\" (the kubelet reads KubeletConfiguration %s "
                                     "only)",
                                     json_object_get_string(kind), json_object_get_string(av),
                                     KUBELET_GROUP_VERSION);
        return 0;
}
