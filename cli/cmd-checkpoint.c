/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nodecm checkpoint verify|show|rewrite FILE: read, check and repair the kubelet's checkpoint
 * files. The kind of file is recognised from its content (cmd-checkpoint.h); this file holds
 * the command and the cpu_manager_state kind.
 *
 * Input files are only ever read, except by `rewrite`, which replaces its target atomically.
 * Output is built in memory and emitted once, so a failure leaves stdout empty.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cpustate.h>
#include <nodecm/fs.h>
#include <nodecm/node.h>
#include "cli.h"
#include "cmd-checkpoint.h"
#include "source.h"

/* Every kind of checkpoint file, tried in order. */
static const cli_checkpoint_kind *const kinds[] = {
                /* before the CPU manager's: a memory_manager_state has policyName and entries
                 * too, but only it has machineState */
                &cli_checkpoint_kind_memory,
                &cli_checkpoint_kind_cpu,
                &cli_checkpoint_kind_device,
                NULL,
};

/* Largest checkpoint file read (the cpu_manager_state limit; device checkpoints are smaller). */
#define CHECKPOINT_MAX_SIZE NCM_CPU_CHECKPOINT_MAX_SIZE

/* ---------------------------------------------------------------------------------------- */
/* Helpers                                                                                   */
/* ---------------------------------------------------------------------------------------- */

static void put_cpus(ncm_buf *b, const ncm_cpuset *s)
{
        int n = ncm_cpuset_weight(s);
        if (n == 0) {
                ncm_buf_puts(b, "none");
                return;
        }
        ncm_cpuset_format_list_buf(s, b);
        ncm_buf_printf(b, " (%d CPU%s)", n, n == 1 ? "" : "s");
}

static void json_str(ncm_buf *b, const char *s)
{
        ncm_buf_json_string(b, s, strlen(s));
}

static void json_cpus(ncm_buf *b, const ncm_cpuset *s)
{
        ncm_buf_putc(b, '"');
        ncm_cpuset_format_list_buf(s, b);
        ncm_buf_putc(b, '"');
}

static const char *format_name(ncm_cpu_checkpoint_format f)
{
        switch (f) {
        case NCM_CPU_CHECKPOINT_V1:
                return "V1";
        case NCM_CPU_CHECKPOINT_V2:
                return "V2";
        case NCM_CPU_CHECKPOINT_V3:
                return "V3";
        case NCM_CPU_CHECKPOINT_V4:
                return "V4";
        }
        return "?";
}

static const char *match_name(ncm_cpu_checksum_match m)
{
        switch (m) {
        case NCM_CPU_CHECKSUM_ZERO:
                return "zero";
        case NCM_CPU_CHECKSUM_LEGACY:
                return "legacy";
        case NCM_CPU_CHECKSUM_NATIVE:
                return "native";
        case NCM_CPU_CHECKSUM_DATA:
                return "data";
        case NCM_CPU_CHECKSUM_MISMATCH:
                break;
        }
        return "mismatch";
}

/* "1.37", the release a checkpoint was read as. */
static const char *release_name(ncm_kubelet_version v, char *buf, size_t size)
{
        return ncm_kubelet_version_format(v, buf, size);
}

/* The rendering a verified checksum was computed over. */
static const char *rendering_name(const ncm_cpu_checkpoint *c)
{
        if (c->format == NCM_CPU_CHECKPOINT_V4)
                return "over data";
        if (c->format == NCM_CPU_CHECKPOINT_V1)
                return "V1 rendering";
        if (c->match == NCM_CPU_CHECKSUM_NATIVE)
                return c->format == NCM_CPU_CHECKPOINT_V3 ? "CPUManagerCheckpointV3 rendering"
                                                          : "CPUManagerCheckpointV2 rendering";
        return "CPUManagerCheckpoint rendering";
}

static int oom(ncm_error *err, const char *path)
{
        return ncm_error_set(err, ENOMEM, "%s: out of memory", path);
}

/* Parse TEXT as a cpuset; NULL (with the kubelet's message in ERR) when it is not one. */
static ncm_cpuset *parse_cpus(const char *text, ncm_error *err)
{
        ncm_cpuset *s = NULL;
        if (ncm_cpuset_parse_list(text, &s, err) < 0)
                return NULL;
        return s;
}

/* ---------------------------------------------------------------------------------------- */
/* cpu_manager_state                                                                         */
/* ---------------------------------------------------------------------------------------- */

static int cpu_probe(const char *text, size_t len, const char *path, ncm_error *err)
{
        return ncm_cpu_checkpoint_probe(text, len, path, err);
}

static int cpu_parse(const cli_checkpoint_args *a, ncm_cpu_checkpoint **ret, ncm_error *err)
{
        return ncm_cpu_checkpoint_parse_version(a->text, a->len, a->path, a->kubelet_version, ret,
                                                err);
}

/* A V4 file's V2 part: its checksum status, in words, for verify and show. */
static void v2_part_status(const ncm_cpu_checkpoint *c, ncm_buf *b)
{
        const ncm_cpu_checkpoint *p = c->v2_part;
        if (p->match == NCM_CPU_CHECKSUM_MISMATCH)
                ncm_buf_printf(b, "checksum %" PRIu64 " does not verify (it hashes to %" PRIu32 ")",
                               p->checksum, p->legacy_checksum);
        else if (p->match == NCM_CPU_CHECKSUM_ZERO)
                ncm_buf_puts(b, "checksum 0 (accepted unverified)");
        else
                ncm_buf_printf(b, "checksum %" PRIu64 " verified (%s)", p->checksum,
                               rendering_name(p));
}

/* Whether a V4 file's V2 part says what its data says (kubelets before 1.37 read the part). */
static bool v2_part_agrees(const ncm_cpu_checkpoint *c)
{
        const ncm_cpu_checkpoint *p = c->v2_part;
        if (c->data_error || strcmp(p->policy_name, c->policy_name) != 0 ||
            strcmp(p->default_cpus, c->default_cpus) != 0 || p->npods != c->npods)
                return false;
        for (size_t i = 0; i < p->npods; i++) {
                if (strcmp(p->pods[i].uid, c->pods[i].uid) != 0 || p->pods[i].n != c->pods[i].n)
                        return false;
                for (size_t j = 0; j < p->pods[i].n; j++)
                        if (strcmp(p->pods[i].entries[j].name, c->pods[i].entries[j].name) != 0 ||
                            strcmp(p->pods[i].entries[j].cpus, c->pods[i].entries[j].cpus) != 0)
                                return false;
        }
        return true;
}

/* What a V4 file's V2 part means to the kubelets that read it (up to 1.36). */
static void v2_part_note(const ncm_cpu_checkpoint *c, ncm_buf *b)
{
        if (c->v2_part->match == NCM_CPU_CHECKSUM_MISMATCH)
                ncm_buf_puts(b, ", so kubelets up to 1.36 refuse the file");
        else if (!c->data_error && !v2_part_agrees(c))
                ncm_buf_puts(b, ", and differs from data: kubelets up to 1.36 read it");
}

/* The cpusets of a checkpoint that is not restored (V1 without its container map, V3). */
static int check_cpusets(const ncm_cpu_checkpoint *c, const char *path, ncm_error *err)
{
        ncm_error e = NCM_ERROR_INIT;
        ncm_cpuset *s = parse_cpus(c->default_cpus, &e);
        if (!s)
                return ncm_error_set(err, NCM_E_INVALID_STATE,
                                     "%s: could not parse default cpu set \"%s\": %s", path,
                                     c->default_cpus, e.msg);
        ncm_cpuset_free(s);
        for (size_t i = 0; i < c->nv1; i++) {
                s = parse_cpus(c->v1[i].cpus, &e);
                if (!s)
                        return ncm_error_set(err, NCM_E_INVALID_STATE,
                                             "%s: could not parse cpuset \"%s\" for container ID "
                                             "'%s': %s",
                                             path, c->v1[i].cpus, c->v1[i].name, e.msg);
                ncm_cpuset_free(s);
        }
        for (size_t i = 0; i < c->npods; i++) {
                for (size_t j = 0; j < c->pods[i].n; j++) {
                        const ncm_cpu_checkpoint_entry *en = &c->pods[i].entries[j];
                        s = parse_cpus(en->cpus, &e);
                        if (!s)
                                return ncm_error_set(err, NCM_E_INVALID_STATE,
                                                     "%s: could not parse cpuset \"%s\" for "
                                                     "container \"%s\" in pod \"%s\": %s",
                                                     path, en->cpus, en->name, c->pods[i].uid,
                                                     e.msg);
                        ncm_cpuset_free(s);
                }
        }
        return 0;
}

/*
 * The kubelet accepts a state in which two containers hold the same CPU (its validation only
 * checks the union against the machine), but a CPU given exclusively twice is worth saying.
 */
static void warn_overlaps(const ncm_cpu_state *s, const char *path)
{
        ncm_cpu_state_iter i = NCM_CPU_STATE_ITER_INIT;
        const char *pa, *ca, *pb, *cb;
        const ncm_cpuset *sa, *sb;
        ncm_autoptr(ncm_cpuset) both = ncm_cpuset_new();

        while (both && ncm_cpu_state_next(s, &i, &pa, &ca, &sa)) {
                ncm_cpu_state_iter j = i;
                while (ncm_cpu_state_next(s, &j, &pb, &cb, &sb)) {
                        ncm_autofree char *txt = NULL;
                        ncm_cpuset_and(both, sa, sb);
                        if (ncm_cpuset_is_empty(both) || !(txt = ncm_cpuset_format_list(both)))
                                continue;
                        fprintf(stderr,
                                "nodecm: warning: %s: CPUs %s are held by both %s/%s and %s/%s%s\n",
                                path, txt, pa, ca, pb, cb,
                                strcmp(pa, pb) == 0 ? " (normal when one is an init container "
                                                      "whose CPUs the other reused)"
                                                    : " (two pods share exclusive CPUs; the "
                                                      "kubelet does not check this)");
                }
        }
}

static int cpu_verify(const cli_checkpoint_args *a, ncm_buf *out, ncm_error *err)
{
        ncm_autoptr(ncm_cpu_checkpoint) c = NULL;
        ncm_autoptr(ncm_cpu_state) s = NULL;
        bool kubelet_start = a->topo || a->policy;
        char rel[16];
        int r;

        r = cpu_parse(a, &c, err);
        if (r < 0)
                return r;
        release_name(c->kubelet, rel, sizeof(rel));
        /*
         * A file the release refuses: in nodecm's words when its own checksum fails, else in
         * the release's. 1.36 refuses a V3 file with the gate off; said as information unless it
         * starts. A release that reads the file is what counts: an older one reads a V4 file's
         * V2 part whatever its data holds.
         */
        bool v3_info = c->format == NCM_CPU_CHECKPOINT_V3 && !c->read_as && !kubelet_start;
        if (!c->read_as && ncm_cpu_checkpoint_verify(c, err) < 0)
                return ncm_error_prefix(err, "%s", a->path);
        if (!c->read_as && !v3_info)
                return ncm_error_set(err, NCM_E_INVALID_STATE,
                                     "%s: %s %s: kubelet %s refuses it%s: %s", a->path,
                                     NCM_CPU_CHECKPOINT_NAME, format_name(c->format), rel,
                                     c->format == NCM_CPU_CHECKPOINT_V3
                                                     ? " with PodLevelResourceManagers off"
                                                     : "",
                                     c->kubelet_error);
        if (v3_info || (c->read_as == NCM_CPU_CHECKPOINT_V1 && c->format == NCM_CPU_CHECKPOINT_V1 &&
                        !kubelet_start && a->nrefs == 0)) {
                r = check_cpusets(c, a->path, err);
                if (r < 0)
                        return r;
        } else {
                r = ncm_cpu_checkpoint_restore(c, a->policy, a->refs, a->nrefs, &s, err);
                if (r < 0)
                        return ncm_error_prefix(err, "%s", a->path);
                warn_overlaps(s, a->path);
        }

        /* what the release read: an older one a V4 file's V2 part */
        const ncm_cpu_checkpoint *view =
                        c->format == NCM_CPU_CHECKPOINT_V4 && c->read_as != NCM_CPU_CHECKPOINT_V4
                                        ? c->v2_part
                                        : c;
        ncm_buf_printf(out, "%s: %s %s, policy ", a->path, NCM_CPU_CHECKPOINT_NAME,
                       format_name(c->format));
        ncm_buf_puts(out, view->policy_name[0] ? view->policy_name : "\"\"");
        if (c->format == NCM_CPU_CHECKPOINT_V1) {
                ncm_buf_printf(out, ", %zu container%s", c->nv1, c->nv1 == 1 ? "" : "s");
        } else {
                size_t n = 0;
                for (size_t i = 0; i < view->npods; i++)
                        n += view->pods[i].n;
                ncm_buf_printf(out, ", %zu pod%s, %zu container%s", view->npods,
                               view->npods == 1 ? "" : "s", n, n == 1 ? "" : "s");
        }
        if (c->match == NCM_CPU_CHECKSUM_ZERO)
                ncm_buf_puts(out, ", checksum 0 (accepted unverified)");
        else if (c->format == NCM_CPU_CHECKPOINT_V4)
                ncm_buf_printf(out, ", dataChecksum %" PRIu64 "%s", c->checksum,
                               c->match == NCM_CPU_CHECKSUM_DATA ? " verified" : "");
        else
                ncm_buf_printf(out, ", checksum %" PRIu64 " verified (%s)", c->checksum,
                               rendering_name(c));
        if (c->format == NCM_CPU_CHECKPOINT_V4 && c->read_as != NCM_CPU_CHECKPOINT_V4) {
                /* an older release, which goes by the V2 part whatever data holds */
                ncm_error e = NCM_ERROR_INIT;
                if (ncm_cpu_checkpoint_verify(c, &e) < 0)
                        ncm_buf_printf(out, " (1.37 refuses it: %s)", e.msg);
        }
        if (c->format == NCM_CPU_CHECKPOINT_V4) {
                ncm_buf_puts(out, ", V2 part ");
                v2_part_status(c, out);
                v2_part_note(c, out);
        }
        if (c->read_as && c->read_as != c->format)
                ncm_buf_printf(out, ", read as %s by kubelet %s", format_name(c->read_as), rel);

        if (v3_info) {
                ncm_buf_printf(out,
                               ": valid for a kubelet with PodLevelResourceManagers on; kubelet "
                               "%s with the gate off refuses it (%s)\n",
                               rel, c->kubelet_error);
                return 0;
        }
        if (c->format == NCM_CPU_CHECKPOINT_V1 && !s) {
                ncm_buf_puts(out, c->nv1 ? ": valid; the kubelet migrates it to V2 through the "
                                           "container IDs of running containers (give them with "
                                           "--container ID=POD/NAME)\n"
                                         : ": valid; the kubelet reads it as V2\n");
                return 0;
        }
        if (!a->topo) {
                ncm_buf_puts(out, ": valid\n");
                return 0;
        }

        /* The static policy's Start; the none policy has no start-up check. */
        if (strcmp(ncm_cpu_state_policy(s), "static") != 0) {
                ncm_buf_printf(out, ": valid; policy \"%s\" has no start-up validation\n",
                               ncm_cpu_state_policy(s));
                return 0;
        }
        ncm_autoptr(ncm_cpuset) all = ncm_cpuset_new();
        if (!all)
                return oom(err, a->path);
        ncm_topo_all_cpus(a->topo, all);
        r = ncm_cpu_state_validate(s, all, a->reserved, a->strict, err);
        if (r < 0)
                return ncm_error_prefix(err, "%s: the kubelet would refuse to start on %s", a->path,
                                        a->topo_desc);
        if (r == 1) {
                ncm_buf_printf(out, ": valid; fresh state, the kubelet would set the shared pool "
                                    "to ");
                ncm_cpuset_format_list_buf(ncm_cpu_state_default(s), out);
                ncm_buf_printf(out, " on %s\n", a->topo_desc);
                return 0;
        }
        ncm_buf_printf(out, ": valid; the kubelet's start-up validation passes on %s\n",
                       a->topo_desc);
        return 0;
}

/* One cpuset text for display: canonical with its count, or the raw text and why it is bad. */
static void show_cpus_text(ncm_buf *b, const char *text)
{
        ncm_error e = NCM_ERROR_INIT;
        ncm_cpuset *s = parse_cpus(text, &e);
        if (!s) {
                ncm_buf_printf(b, "\"%s\" (invalid: %s)", text, e.msg);
                return;
        }
        put_cpus(b, s);
        ncm_cpuset_free(s);
}

static void json_cpus_text(ncm_buf *b, const char *text)
{
        ncm_error e = NCM_ERROR_INIT;
        ncm_cpuset *s = parse_cpus(text, &e);
        ncm_buf_puts(b, "{\"text\":");
        json_str(b, text);
        if (s) {
                ncm_buf_puts(b, ",\"cpus\":");
                json_cpus(b, s);
                ncm_buf_printf(b, ",\"count\":%d}", ncm_cpuset_weight(s));
        } else {
                ncm_buf_puts(b, ",\"cpus\":null,\"count\":null,\"error\":");
                json_str(b, e.msg);
                ncm_buf_putc(b, '}');
        }
        ncm_cpuset_free(s);
}

/* Union of every parsable container set (all CPUs exclusively held), V1 and V2 alike. */
static void held_cpus(const ncm_cpu_checkpoint *c, ncm_cpuset *out, size_t *ncontainers)
{
        *ncontainers = 0;
        for (size_t i = 0; i < c->nv1; i++) {
                ncm_cpuset *s = parse_cpus(c->v1[i].cpus, NULL);
                if (s)
                        ncm_cpuset_or(out, out, s);
                ncm_cpuset_free(s);
                (*ncontainers)++;
        }
        for (size_t i = 0; i < c->npods; i++)
                for (size_t j = 0; j < c->pods[i].n; j++) {
                        ncm_cpuset *s = parse_cpus(c->pods[i].entries[j].cpus, NULL);
                        if (s)
                                ncm_cpuset_or(out, out, s);
                        ncm_cpuset_free(s);
                        (*ncontainers)++;
                }
}

static void pad(ncm_buf *b, const char *s, size_t width)
{
        size_t n = strlen(s);
        ncm_buf_puts(b, s);
        for (; n < width; n++)
                ncm_buf_putc(b, ' ');
}

/* A table of promises (nodecm's promised member or V4's baselines) under TITLE. */
static void show_promises(ncm_buf *b, const char *title, const ncm_cpu_checkpoint_pod *pods,
                          size_t n, size_t w1, size_t w2)
{
        ncm_buf_printf(b, "\n%s\n", title);
        for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < pods[i].n; j++) {
                        pad(b, pods[i].uid, w1 + 2);
                        pad(b, pods[i].entries[j].name, w2 + 2);
                        show_cpus_text(b, pods[i].entries[j].cpus);
                        ncm_buf_putc(b, '\n');
                }
}

/* ,"KEY":[{"pod":…,"container":…,"cpuSet":…}…] for promises. */
static void json_promises(ncm_buf *b, const char *key, const ncm_cpu_checkpoint_pod *pods, size_t n)
{
        bool first = true;
        ncm_buf_printf(b, ",\"%s\":[", key);
        for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < pods[i].n; j++) {
                        ncm_buf_puts(b, first ? "{\"pod\":" : ",{\"pod\":");
                        json_str(b, pods[i].uid);
                        ncm_buf_puts(b, ",\"container\":");
                        json_str(b, pods[i].entries[j].name);
                        ncm_buf_puts(b, ",\"cpuSet\":");
                        json_cpus_text(b, pods[i].entries[j].cpus);
                        ncm_buf_putc(b, '}');
                        first = false;
                }
        ncm_buf_putc(b, ']');
}

static void show_text(const cli_checkpoint_args *a, const ncm_cpu_checkpoint *file, ncm_buf *b)
{
        ncm_autoptr(ncm_cpuset) held = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) tmp = ncm_cpuset_new();
        const ncm_cpu_checkpoint *c = file;
        ncm_cpuset *dflt = NULL;
        size_t nctr = 0;

        if (!held || !tmp) {
                b->oom = true;
                return;
        }

        ncm_buf_printf(b, "file:         %s\n", a->path);
        ncm_buf_printf(b, "kind:         %s %s%s\n", NCM_CPU_CHECKPOINT_NAME,
                       format_name(c->format),
                       c->format == NCM_CPU_CHECKPOINT_V4
                                       ? " (1.37: data and dataChecksum, V2 fields for older "
                                         "kubelets)"
                                       : "");
        if (c->format == NCM_CPU_CHECKPOINT_V4) {
                ncm_buf_printf(b, "checksum:     dataChecksum %" PRIu64, c->checksum);
                if (c->data_error)
                        ncm_buf_printf(b, ", data does not decode: %s\n", c->data_error);
                else if (c->match == NCM_CPU_CHECKSUM_DATA)
                        ncm_buf_puts(b, ", verified (over data)\n");
                else
                        ncm_buf_printf(b, ", MISMATCH: the data hashes to %" PRIu32 "\n",
                                       c->legacy_checksum);
                ncm_buf_puts(b, "V2 part:      ");
                v2_part_status(c, b);
                if (c->v2_part->match == NCM_CPU_CHECKSUM_MISMATCH)
                        ncm_buf_puts(b, ": kubelets up to 1.36 refuse the file");
                else if (!c->data_error)
                        ncm_buf_puts(b, v2_part_agrees(c) ? "; the same content as data"
                                                          : "; DIFFERS from data (kubelets up "
                                                            "to 1.36 read it)");
                ncm_buf_putc(b, '\n');
        } else {
                ncm_buf_printf(b, "checksum:     %" PRIu64, c->checksum);
        }
        switch (c->format == NCM_CPU_CHECKPOINT_V4 ? NCM_CPU_CHECKSUM_DATA : c->match) {
        case NCM_CPU_CHECKSUM_DATA:
                break;
        case NCM_CPU_CHECKSUM_ZERO:
                ncm_buf_puts(b, ", not verified (the kubelet accepts 0 for compatibility)\n");
                break;
        case NCM_CPU_CHECKSUM_LEGACY:
        case NCM_CPU_CHECKSUM_NATIVE:
                ncm_buf_printf(b, ", verified (%s)\n", rendering_name(c));
                break;
        case NCM_CPU_CHECKSUM_MISMATCH:
                if (c->format == NCM_CPU_CHECKPOINT_V1)
                        ncm_buf_printf(b, ", MISMATCH: the content hashes to %" PRIu32 "\n",
                                       c->legacy_checksum);
                else
                        ncm_buf_printf(b,
                                       ", MISMATCH: the content hashes to %" PRIu32
                                       " (CPUManagerCheckpoint) or %" PRIu32
                                       " (CPUManagerCheckpoint%s)\n",
                                       c->legacy_checksum, c->native_checksum,
                                       format_name(c->format));
                break;
        }
        char rel[16];
        release_name(c->kubelet, rel, sizeof(rel));
        if (c->kubelet_error)
                ncm_buf_printf(b, "kubelet:      %s refuses this file%s: %s\n", rel,
                               c->format == NCM_CPU_CHECKPOINT_V3
                                               ? " unless PodLevelResourceManagers is on"
                                               : "",
                               c->kubelet_error);
        else if (c->read_as != c->format)
                ncm_buf_printf(b, "kubelet:      %s reads it as %s%s\n", rel,
                               format_name(c->read_as),
                               c->format == NCM_CPU_CHECKPOINT_V4 ? " (its V2 part, below)" : "");
        /* the contents that release reads: an older one a V4 file's V2 part */
        if (c->format == NCM_CPU_CHECKPOINT_V4 && c->read_as && c->read_as != c->format)
                c = c->v2_part;
        dflt = parse_cpus(c->default_cpus, NULL);
        held_cpus(c, held, &nctr);
        ncm_buf_printf(b, "policy:       %s\n", c->policy_name);
        ncm_buf_puts(b, "shared pool:  ");
        show_cpus_text(b, c->default_cpus);
        ncm_buf_putc(b, '\n');
        if (a->reserved) {
                ncm_buf_puts(b, "reserved:     ");
                put_cpus(b, a->reserved);
                ncm_buf_puts(b, "; in the shared pool: ");
                if (dflt) {
                        ncm_cpuset_and(tmp, a->reserved, dflt);
                        put_cpus(b, tmp);
                } else {
                        ncm_buf_puts(b, "unknown");
                }
                ncm_buf_puts(b, "; held by containers: ");
                ncm_cpuset_and(tmp, a->reserved, held);
                put_cpus(b, tmp);
                ncm_buf_putc(b, '\n');
        }
        ncm_buf_puts(b, "exclusive:    ");
        put_cpus(b, held);
        if (nctr == 0 && c->npods == 0)
                ncm_buf_putc(b, '\n');
        else if (c->format == NCM_CPU_CHECKPOINT_V1)
                ncm_buf_printf(b, " in %zu container%s (by container ID, V1)\n", nctr,
                               nctr == 1 ? "" : "s");
        else
                ncm_buf_printf(b, " in %zu container%s of %zu pod%s\n", nctr, nctr == 1 ? "" : "s",
                               c->npods, c->npods == 1 ? "" : "s");
        ncm_cpuset_free(dflt);

        /* The assignments as a table, columns as wide as their longest cell. */
        size_t w1 = c->format == NCM_CPU_CHECKPOINT_V1 ? strlen("CONTAINER ID") : strlen("POD");
        size_t w2 = strlen("CONTAINER");
        for (size_t i = 0; i < c->nv1; i++)
                if (strlen(c->v1[i].name) > w1)
                        w1 = strlen(c->v1[i].name);
        for (size_t i = 0; i < c->npods; i++) {
                if (strlen(c->pods[i].uid) > w1)
                        w1 = strlen(c->pods[i].uid);
                for (size_t j = 0; j < c->pods[i].n; j++)
                        if (strlen(c->pods[i].entries[j].name) > w2)
                                w2 = strlen(c->pods[i].entries[j].name);
        }
        if (c->format == NCM_CPU_CHECKPOINT_V1 && c->nv1) {
                ncm_buf_putc(b, '\n');
                pad(b, "CONTAINER ID", w1 + 2);
                ncm_buf_puts(b, "CPUS\n");
                for (size_t i = 0; i < c->nv1; i++) {
                        pad(b, c->v1[i].name, w1 + 2);
                        show_cpus_text(b, c->v1[i].cpus);
                        ncm_buf_putc(b, '\n');
                }
        }
        if (c->npods) {
                ncm_buf_putc(b, '\n');
                pad(b, "POD", w1 + 2);
                pad(b, "CONTAINER", w2 + 2);
                ncm_buf_puts(b, "CPUS\n");
                for (size_t i = 0; i < c->npods; i++) {
                        const ncm_cpu_checkpoint_pod *p = &c->pods[i];
                        if (p->n == 0) {
                                pad(b, p->uid, w1 + 2);
                                ncm_buf_puts(b, p->nil ? "(null)\n" : "(no containers)\n");
                        }
                        for (size_t j = 0; j < p->n; j++) {
                                pad(b, p->uid, w1 + 2);
                                pad(b, p->entries[j].name, w2 + 2);
                                show_cpus_text(b, p->entries[j].cpus);
                                ncm_buf_putc(b, '\n');
                        }
                }
        }
        /* nodecm's member: what in-place resizes never take away (KEP-5554) */
        if (file->npromised)
                show_promises(b, "PROMISED (nodecm, in-place resize)", file->promised,
                              file->npromised, w1, w2);
        /* the kubelet's own place for the promise, in V4 data */
        if (c->nbaselines)
                show_promises(b, "BASELINE (in-place resize: the CPUs of the first admission)",
                              c->baselines, c->nbaselines, w1, w2);
        if (c->npod_entries) {
                ncm_buf_puts(b, c->format == NCM_CPU_CHECKPOINT_V4 ? "\nPOD-LEVEL (podEntries)\n"
                                                                   : "\nPOD-LEVEL (V3)\n");
                for (size_t i = 0; i < c->npod_entries; i++) {
                        pad(b, c->pod_entries[i].uid, w1 + 2);
                        if (c->pod_entries[i].has_cpus)
                                show_cpus_text(b, c->pod_entries[i].cpus);
                        else
                                ncm_buf_puts(b, "(no cpuSet)");
                        ncm_buf_putc(b, '\n');
                }
        }
}

static void show_json(const cli_checkpoint_args *a, const ncm_cpu_checkpoint *c, ncm_buf *b)
{
        ncm_buf_puts(b, "{\"file\":");
        json_str(b, a->path);
        ncm_buf_printf(b, ",\"kind\":\"%s\",\"format\":\"%s\",\"policyName\":",
                       NCM_CPU_CHECKPOINT_NAME, format_name(c->format));
        json_str(b, c->policy_name);
        ncm_buf_printf(b,
                       ",\"checksum\":%" PRIu64 ",\"checksumStatus\":\"%s\","
                       "\"computedChecksums\":{\"legacy\":%" PRIu32 ",\"native\":%" PRIu32 "}",
                       c->checksum, match_name(c->match), c->legacy_checksum, c->native_checksum);
        char rel[16];
        ncm_buf_printf(b, ",\"kubeletVersion\":\"%s\",\"readAs\":",
                       release_name(c->kubelet, rel, sizeof(rel)));
        if (c->read_as)
                ncm_buf_printf(b, "\"%s\"", format_name(c->read_as));
        else
                ncm_buf_puts(b, "null");
        ncm_buf_puts(b, ",\"kubeletError\":");
        if (c->kubelet_error)
                json_str(b, c->kubelet_error);
        else
                ncm_buf_puts(b, "null");
        if (c->format == NCM_CPU_CHECKPOINT_V4) {
                const ncm_cpu_checkpoint *p = c->v2_part;
                ncm_buf_puts(b, ",\"dataError\":");
                if (c->data_error)
                        json_str(b, c->data_error);
                else
                        ncm_buf_puts(b, "null");
                ncm_buf_puts(b, ",\"v2Part\":{\"policyName\":");
                json_str(b, p->policy_name);
                ncm_buf_puts(b, ",\"defaultCpuSet\":");
                json_cpus_text(b, p->default_cpus);
                ncm_buf_printf(b,
                               ",\"checksum\":%" PRIu64 ",\"checksumStatus\":\"%s\","
                               "\"computedChecksums\":{\"legacy\":%" PRIu32 ",\"native\":%" PRIu32
                               "},\"sameAsData\":%s}",
                               p->checksum, match_name(p->match), p->legacy_checksum,
                               p->native_checksum, v2_part_agrees(c) ? "true" : "false");
        }
        ncm_buf_puts(b, ",\"defaultCpuSet\":");
        json_cpus_text(b, c->default_cpus);
        if (a->reserved) {
                ncm_autoptr(ncm_cpuset) held = ncm_cpuset_new();
                ncm_autoptr(ncm_cpuset) tmp = ncm_cpuset_new();
                ncm_cpuset *dflt = parse_cpus(c->default_cpus, NULL);
                size_t n;
                if (!held || !tmp) {
                        b->oom = true;
                        ncm_cpuset_free(dflt);
                        return;
                }
                held_cpus(c, held, &n);
                ncm_buf_puts(b, ",\"reserved\":{\"cpus\":");
                json_cpus(b, a->reserved);
                ncm_buf_puts(b, ",\"inDefault\":");
                if (dflt) {
                        ncm_cpuset_and(tmp, a->reserved, dflt);
                        json_cpus(b, tmp);
                } else {
                        ncm_buf_puts(b, "null");
                }
                ncm_buf_puts(b, ",\"inContainers\":");
                ncm_cpuset_and(tmp, a->reserved, held);
                json_cpus(b, tmp);
                ncm_buf_putc(b, '}');
                ncm_cpuset_free(dflt);
        }
        ncm_buf_puts(b, ",\"entries\":[");
        bool first = true;
        for (size_t i = 0; i < c->npods; i++) {
                const ncm_cpu_checkpoint_pod *p = &c->pods[i];
                if (p->n == 0) {
                        ncm_buf_puts(b, first ? "{\"pod\":" : ",{\"pod\":");
                        json_str(b, p->uid);
                        ncm_buf_puts(b, ",\"container\":null,\"cpuSet\":null}");
                        first = false;
                }
                for (size_t j = 0; j < p->n; j++) {
                        ncm_buf_puts(b, first ? "{\"pod\":" : ",{\"pod\":");
                        json_str(b, p->uid);
                        ncm_buf_puts(b, ",\"container\":");
                        json_str(b, p->entries[j].name);
                        ncm_buf_puts(b, ",\"cpuSet\":");
                        json_cpus_text(b, p->entries[j].cpus);
                        ncm_buf_putc(b, '}');
                        first = false;
                }
        }
        ncm_buf_putc(b, ']');
        if (c->npromised)
                json_promises(b, "promised", c->promised, c->npromised);
        if (c->format == NCM_CPU_CHECKPOINT_V4)
                json_promises(b, "baselines", c->baselines, c->nbaselines);
        if (c->format == NCM_CPU_CHECKPOINT_V1) {
                ncm_buf_puts(b, ",\"v1Entries\":[");
                for (size_t i = 0; i < c->nv1; i++) {
                        ncm_buf_puts(b, i ? ",{\"containerId\":" : "{\"containerId\":");
                        json_str(b, c->v1[i].name);
                        ncm_buf_puts(b, ",\"cpuSet\":");
                        json_cpus_text(b, c->v1[i].cpus);
                        ncm_buf_putc(b, '}');
                }
                ncm_buf_putc(b, ']');
        }
        if (c->format == NCM_CPU_CHECKPOINT_V3 ||
            (c->format == NCM_CPU_CHECKPOINT_V4 && c->npod_entries)) {
                ncm_buf_puts(b, ",\"podEntries\":[");
                for (size_t i = 0; i < c->npod_entries; i++) {
                        ncm_buf_puts(b, i ? ",{\"pod\":" : "{\"pod\":");
                        json_str(b, c->pod_entries[i].uid);
                        ncm_buf_puts(b, ",\"cpuSet\":");
                        if (c->pod_entries[i].has_cpus)
                                json_cpus_text(b, c->pod_entries[i].cpus);
                        else
                                ncm_buf_puts(b, "null");
                        ncm_buf_putc(b, '}');
                }
                ncm_buf_putc(b, ']');
        }
        ncm_buf_puts(b, "}\n");
}

static int cpu_show(const cli_checkpoint_args *a, ncm_buf *out, ncm_error *err)
{
        ncm_autoptr(ncm_cpu_checkpoint) c = NULL;
        int r = cpu_parse(a, &c, err);
        if (r < 0)
                return r;
        if (a->json)
                show_json(a, c, out);
        else
                show_text(a, c, out);
        return 0;
}

/*
 * rewrite --drop / --fit: remove drained pods, then make the state one the kubelet accepts on
 * the given machine. CHANGE receives a description of what changed (nothing when nothing did).
 */
static int fit_state(const cli_checkpoint_args *a, ncm_cpu_state *s, ncm_buf *change,
                     ncm_error *err)
{
        ncm_autoptr(ncm_cpuset) before = ncm_cpuset_dup(ncm_cpu_state_default(s));
        ncm_autoptr(ncm_cpuset) all = ncm_cpuset_new();
        int r;

        if (!before || !all)
                return oom(err, a->path);
        for (size_t i = 0; i < a->ndrop; i++) {
                r = ncm_cpu_state_delete_pod(s, a->drop[i], err);
                if (r == 0)
                        return ncm_error_set(err, NCM_E_NOT_FOUND, "%s: --drop %s: no such pod",
                                             a->path, a->drop[i]);
                ncm_buf_printf(change, "%spod %s dropped (%d container%s)", change->len ? "; " : "",
                               a->drop[i], r, r == 1 ? "" : "s");
        }
        if (!a->fit)
                return 0;
        if (strcmp(ncm_cpu_state_policy(s), "static") != 0)
                return ncm_error_set(err, NCM_E_INVALID_STATE,
                                     "%s: --fit: policy \"%s\" keeps no CPU accounting to fit "
                                     "(only static does)",
                                     a->path, ncm_cpu_state_policy(s));
        ncm_topo_all_cpus(a->topo, all);
        r = ncm_cpu_state_fit(s, all, a->reserved, a->strict, err);
        if (r < 0)
                return ncm_error_prefix(err, "%s: cannot fit the state to %s", a->path,
                                        a->topo_desc);
        if (r > 0) {
                ncm_buf_printf(change, "%sshared pool ", change->len ? "; " : "");
                if (ncm_cpuset_is_empty(before))
                        ncm_buf_puts(change, "\"\"");
                else
                        ncm_cpuset_format_list_buf(before, change);
                ncm_buf_puts(change, " -> ");
                ncm_cpuset_format_list_buf(ncm_cpu_state_default(s), change);
                ncm_buf_printf(change, " to fit %s", a->topo_desc);
        }
        return 0;
}

/*
 * The release whose layout rewrite writes: --kubelet-version, else the file's own (V4: the
 * newest release's; V1 and V2: 1.36's V2, which every release up to 1.36 writes the same).
 */
static ncm_kubelet_version rewrite_release(const cli_checkpoint_args *a,
                                           const ncm_cpu_checkpoint *c)
{
        if (a->has_kubelet_version)
                return a->kubelet_version;
        if (c->format == NCM_CPU_CHECKPOINT_V4)
                return NCM_KUBELET_VERSION_DEFAULT;
        return (ncm_kubelet_version){1, 36};
}

static int cpu_rewrite(const cli_checkpoint_args *a, ncm_buf *out, ncm_error *err)
{
        ncm_autoptr(ncm_cpu_checkpoint) c = NULL;
        ncm_autoptr(ncm_cpu_state) s = NULL;
        const char *target = a->output ? a->output : a->path;
        ncm_buf text = NCM_BUF_INIT;
        ncm_buf change = NCM_BUF_INIT;
        bool fixed = false;
        char rel[16];
        int r;

        r = cpu_parse(a, &c, err);
        if (r < 0)
                return r;
        if (c->format == NCM_CPU_CHECKPOINT_V3)
                return ncm_error_set(err, NCM_E_INVALID_STATE,
                                     "%s: V3 checkpoint (PodLevelResourceManagers): not rewritten, "
                                     "nodecm keeps no pod-level sets to write back",
                                     a->path);
        if (c->match == NCM_CPU_CHECKSUM_MISMATCH ||
            (c->format == NCM_CPU_CHECKPOINT_V4 && c->data_error)) {
                ncm_error e = NCM_ERROR_INIT;
                (void)ncm_cpu_checkpoint_verify(c, &e);
                if (!a->fix_checksum)
                        return ncm_error_set(err, NCM_E_CHECKSUM,
                                             "%s: %s (--fix-checksum accepts the content as it is)",
                                             a->path, e.msg);
                /* The operator vouches for the content: take it as if it verified. */
                r = ncm_cpu_checkpoint_accept(c, err);
                if (r < 0)
                        return ncm_error_prefix(err, "%s: --fix-checksum", a->path);
                fixed = true;
        } else if (!c->read_as) {
                release_name(c->kubelet, rel, sizeof(rel));
                if (!a->fix_checksum)
                        return ncm_error_set(err, NCM_E_INVALID_STATE,
                                             "%s: kubelet %s refuses it: %s (--fix-checksum "
                                             "accepts the content as it is)",
                                             a->path, rel, c->kubelet_error);
                r = ncm_cpu_checkpoint_accept(c, err);
                if (r < 0)
                        return ncm_error_prefix(err, "%s: --fix-checksum", a->path);
                fixed = true;
        }
        r = ncm_cpu_checkpoint_restore(c, a->policy, a->refs, a->nrefs, &s, err);
        if (r < 0)
                return ncm_error_prefix(err, "%s", a->path);
        ncm_cpu_state_set_kubelet_version(s, rewrite_release(a, c));
        r = fit_state(a, s, &change, err);
        if (r < 0) {
                ncm_buf_done(&change);
                return r;
        }
        ncm_cpu_checkpoint_format_state(s, &text);
        if (ncm_buf_failed(&text)) {
                ncm_buf_done(&text);
                ncm_buf_done(&change);
                return oom(err, a->path);
        }
        ncm_autoptr(ncm_cpu_checkpoint) back = NULL;
        r = ncm_cpu_checkpoint_parse(text.data, text.len, target, &back, err);
        if (r < 0) {
                ncm_buf_done(&text);
                ncm_buf_done(&change);
                return r;
        }
        if (!a->output && text.len == a->len && memcmp(text.data, a->text, a->len) == 0) {
                ncm_buf_printf(out,
                               "%s: already in the kubelet's form (%s, %s %" PRIu64
                               "), left as it is\n",
                               a->path, format_name(back->format),
                               back->format == NCM_CPU_CHECKPOINT_V4 ? "dataChecksum" : "checksum",
                               back->checksum);
                ncm_buf_done(&text);
                ncm_buf_done(&change);
                return 0;
        }
        r = ncm_fs_write_atomic(AT_FDCWD, target, text.data, text.len, 0600, err);
        ncm_buf_done(&text);
        if (r < 0) {
                ncm_buf_done(&change);
                return r;
        }
        ncm_buf_printf(out, "%s: written as %s %s with %s %" PRIu64 "%s (from %s %s)", target,
                       NCM_CPU_CHECKPOINT_NAME, format_name(back->format),
                       back->format == NCM_CPU_CHECKPOINT_V4 ? "dataChecksum" : "checksum",
                       back->checksum, fixed ? ", checksum recomputed" : "", a->path,
                       format_name(c->format));
        if (change.len)
                ncm_buf_printf(out, "; %s", change.data);
        ncm_buf_putc(out, '\n');
        ncm_buf_done(&change);
        return 0;
}

const cli_checkpoint_kind cli_checkpoint_kind_cpu = {
                .name = NCM_CPU_CHECKPOINT_NAME,
                .probe = cpu_probe,
                .verify = cpu_verify,
                .show = cpu_show,
                .rewrite = cpu_rewrite,
};

/* ---------------------------------------------------------------------------------------- */
/* The command                                                                               */
/* ---------------------------------------------------------------------------------------- */

enum {
        OPT_JSON = 0x2000,
        OPT_POLICY,
        OPT_RESERVED,
        OPT_STRICT,
        OPT_CONTAINER,
        OPT_OUTPUT,
        OPT_FIX_CHECKSUM,
        OPT_FIT,
        OPT_DROP,
        OPT_RESERVED_MEMORY,
        OPT_KUBELET_VERSION,
};

typedef enum sub { SUB_VERIFY, SUB_SHOW, SUB_REWRITE } sub;

static const char *const sub_names[] = {"verify", "show", "rewrite"};

static void usage(FILE *f)
{
        fputs("Usage: nodecm checkpoint verify FILE [--policy NAME] [SOURCE] [--reserved LIST]\n"
              "                                [--strict] [--container ID=POD/NAME]...\n"
              "       nodecm checkpoint show FILE [--json] [--reserved LIST]\n"
              "       nodecm checkpoint rewrite FILE [--output FILE] [--policy NAME]\n"
              "                                [--container ID=POD/NAME]... [--fix-checksum]\n"
              "                                [--drop POD]... [--fit [SOURCE] [--reserved LIST]\n"
              "                                [--strict]]\n\n"
              "Read the kubelet's checkpoint files with their checksums. The kind of file is\n"
              "recognised from its content: cpu_manager_state (V1, V2, V3, and V4, what\n"
              "kubelet 1.37 writes), memory_manager_state (the layouts of 1.35 and before,\n"
              "1.36 and 1.37) or kubelet_internal_checkpoint (the device manager's). Each is\n"
              "read as one kubelet release reads it (--kubelet-version; default: the newest).\n\n"
              "  verify   check the file as the kubelet does when it starts: decoding, checksum,\n"
              "           cpusets, policy; with a machine, also the static policy's start-up\n"
              "           validation, saying exactly why the kubelet would refuse to start\n"
              "  show     print the contents: per pod and container, the shared pool, the\n"
              "           reserved CPUs (--reserved); --json for a stable JSON rendering\n"
              "  rewrite  write the file back exactly as the kubelet writes it (canonical\n"
              "           cpusets, sorted keys, fresh checksums; its own layout, or that of\n"
              "           --kubelet-version), optionally repaired to fit a machine (--fit) or\n"
              "           without drained pods (--drop); the only subcommand that writes\n\n"
              "Run 'nodecm checkpoint SUBCOMMAND --help' for the options of each.\n"
              "Exit status: 0 valid/done, 1 the file fails verification, 2 bad usage or a\n"
              "file that cannot be read, is not JSON, or is of an unknown kind,\n" CLI_EXIT_ENV,
              f);
}

static void usage_sub(sub which, FILE *f)
{
        switch (which) {
        case SUB_VERIFY:
                fputs("Usage: nodecm checkpoint verify FILE [OPTIONS]\n\n"
                      "Check FILE as the kubelet does when it starts and print one line saying\n"
                      "what it is when it is valid. Without a machine: decoding, checksum and\n"
                      "cpusets. With a machine (a SOURCE option, --reserved or --strict; none of\n"
                      "the source options means this machine) the static policy's start-up\n"
                      "validation runs too.\n\n"
                      "  --policy NAME          the configured cpuManagerPolicy; refuse a file of\n"
                      "                         another policy, as the kubelet does\n"
                      "  --reserved LIST        the reserved CPUs (reservedSystemCPUs)\n"
                      "  --strict               strict-cpu-reservation is on\n"
                      "  --container ID=POD/NAME  a running container, for migrating a V1 file\n"
                      "                         (repeat for each)\n"
                      "  --reserved-memory SPEC memory_manager_state: the kubelet's "
                      "reservedMemory\n"
                      "                         (0:memory=1Gi;1:memory=1Gi), for validateState\n"
                      "  --kubelet-version X.Y  read as that kubelet release does (default: the\n"
                      "                         newest)\n"
                      "  -h, --help             show this help\n\n" CLI_SOURCE_HELP
                      "\nExit status: 0 valid, 1 invalid (the reason on stderr), 2 bad usage or a\n"
                      "file that cannot be read, is not JSON, or is of an unknown "
                      "kind,\n" CLI_EXIT_ENV,
                      f);
                break;
        case SUB_SHOW:
                fputs("Usage: nodecm checkpoint show FILE [--json] [--reserved LIST]\n"
                      "                              [--kubelet-version X.Y]\n\n"
                      "Print what FILE holds: its kind, checksum status, policy, the shared pool,\n"
                      "the exclusive CPUs per pod and container. A file that fails verification\n"
                      "is shown all the same, with the reason.\n\n"
                      "  --json                 print a stable JSON rendering instead\n"
                      "  --reserved LIST        mark these reserved CPUs: where they are\n"
                      "  --kubelet-version X.Y  say how that kubelet release reads it, and show\n"
                      "                         what it reads (default: the newest)\n"
                      "  -h, --help             show this help\n\n"
                      "Exit status: 0 shown, 1 a file of a known kind that cannot be decoded,\n"
                      "2 bad usage or a file that cannot be read, is not JSON or is "
                      "unknown,\n" CLI_EXIT_ENV,
                      f);
                break;
        case SUB_REWRITE:
                fputs("Usage: nodecm checkpoint rewrite FILE [OPTIONS]\n\n"
                      "Write FILE back (or to --output) exactly as the kubelet writes it:\n"
                      "canonical cpusets, keys sorted, fresh checksums, in the file's own layout\n"
                      "(cpu_manager_state V4 stays V4, V1 and V2 become V2) or that of\n"
                      "--kubelet-version. A V1 file is migrated (give its containers with\n"
                      "--container). A file already in that form is left untouched. The file is\n"
                      "replaced atomically.\n\n"
                      "  --output FILE          write there instead of replacing FILE\n"
                      "  --policy NAME          refuse a file of another policy\n"
                      "  --container ID=POD/NAME  a running container, for migrating a V1 file\n"
                      "  --fix-checksum         accept a file whose checksum does not match "
                      "(after\n"
                      "                         editing it by hand) and write a correct one\n"
                      "  --drop POD             remove the assignments of pod POD (drained)\n"
                      "  --fit                  repair the state for the machine of SOURCE (this\n"
                      "                         machine by default): the shared pool becomes "
                      "every\n"
                      "                         CPU (less --reserved with --strict) not held by a\n"
                      "                         container, so the kubelet starts without a drain;\n"
                      "                         refused, naming the container, when an assignment\n"
                      "                         cannot be kept (CPUs gone, reserved or shared)\n"
                      "  --reserved LIST        with --fit: the reserved CPUs "
                      "(reservedSystemCPUs)\n"
                      "  --strict               with --fit: strict-cpu-reservation is on\n"
                      "  --reserved-memory SPEC memory_manager_state with --fit: the reservation\n"
                      "                         (the kubelet's --reserved-memory syntax); --fit\n"
                      "                         rebuilds the machine state for SOURCE keeping\n"
                      "                         every assignment\n"
                      "  --kubelet-version X.Y  read the file as that release does and write its\n"
                      "                         layout (cpu_manager_state: V2 up to 1.36, V4\n"
                      "                         from 1.37; default: the file's own)\n"
                      "  -h, --help             show this help\n\n" CLI_SOURCE_HELP
                      "\nExit status: 0 written, 1 the file fails verification or cannot be\n"
                      "fitted, 2 bad usage or a file that cannot be read or "
                      "written,\n" CLI_EXIT_ENV,
                      f);
                break;
        }
}

/* Which options each subcommand takes. */
static bool allowed(sub which, int opt)
{
        switch (opt) {
        case OPT_JSON:
                return which == SUB_SHOW;
        case OPT_RESERVED:
                return true;
        case OPT_STRICT:
        case CLI_OPT_FSROOT:
        case CLI_OPT_SYNTHETIC:
        case CLI_OPT_XML:
        case CLI_OPT_TOPOLOGY:
                return which != SUB_SHOW;
        case OPT_POLICY:
        case OPT_CONTAINER:
                return which != SUB_SHOW;
        case OPT_OUTPUT:
        case OPT_FIX_CHECKSUM:
        case OPT_FIT:
        case OPT_DROP:
                return which == SUB_REWRITE;
        case OPT_RESERVED_MEMORY:
                return which != SUB_SHOW;
        case OPT_KUBELET_VERSION:
                return true;
        default:
                return true;
        }
}

/* "ID=POD/NAME" into a reference pointing into ARG (which is modified). */
static bool parse_container(char *arg, ncm_container_ref *ref)
{
        char *eq = strchr(arg, '=');
        char *slash = eq ? strrchr(eq + 1, '/') : NULL;
        if (!eq || !slash || eq == arg || slash == eq + 1 || !slash[1])
                return false;
        *eq = '\0';
        *slash = '\0';
        ref->container_id = arg;
        ref->pod_uid = eq + 1;
        ref->container_name = slash + 1;
        return true;
}

/* The lock of the directory holding PATH (a node's lock file beside the kubelet's files). */
static int lock_dir_of(const char *path, int *ret_fd, ncm_error *err)
{
        ncm_autofree char *copy = strdup(path);
        const char *slash;
        int fd;

        if (!copy || strcmp(path, "-") == 0)
                return copy ? 0 : ncm_error_set(err, ENOMEM, "out of memory");
        slash = strrchr(copy, '/');
        if (slash)
                copy[slash - copy + (slash == copy)] = '\0';
        fd = ncm_node_dir_lock(slash ? copy : ".", 0, err);
        if (fd < 0)
                return fd;
        *ret_fd = fd;
        return 0;
}

static int run_sub(sub which, int argc, char **argv)
{
        static const struct option opts[] = {
                        CLI_SOURCE_OPTIONS,
                        {"json", no_argument, NULL, OPT_JSON},
                        {"policy", required_argument, NULL, OPT_POLICY},
                        {"reserved", required_argument, NULL, OPT_RESERVED},
                        {"strict", no_argument, NULL, OPT_STRICT},
                        {"container", required_argument, NULL, OPT_CONTAINER},
                        {"output", required_argument, NULL, OPT_OUTPUT},
                        {"fix-checksum", no_argument, NULL, OPT_FIX_CHECKSUM},
                        {"fit", no_argument, NULL, OPT_FIT},
                        {"drop", required_argument, NULL, OPT_DROP},
                        {"reserved-memory", required_argument, NULL, OPT_RESERVED_MEMORY},
                        {"kubelet-version", required_argument, NULL, OPT_KUBELET_VERSION},
                        {"help", no_argument, NULL, 'h'},
                        {NULL, 0, NULL, 0},
        };
        char cmd[32];
        cli_checkpoint_args a = {0};
        cli_source src = CLI_SOURCE_INIT;
        ncm_autoptr(ncm_cpuset) reserved = NULL;
        ncm_autoptr(ncm_topo) topo = NULL;
        ncm_autofree ncm_container_ref *refs = NULL;
        ncm_autofree char **drop = NULL;
        ncm_autofree char *text = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf out = NCM_BUF_INIT;
        ncm_autoclose int lockfd = -1;
        const cli_checkpoint_kind *kind = NULL;
        char desc[4096];
        bool want_machine = false;
        int c, r;

        snprintf(cmd, sizeof(cmd), "checkpoint %s", sub_names[which]);
        refs = calloc((size_t)argc, sizeof(*refs));
        drop = calloc((size_t)argc, sizeof(*drop));
        if (!refs || !drop)
                return cli_fail(-ENOMEM, NULL);
        opterr = 0;
        optind = 0;
        /* No '+': FILE may come before or after the options. */
        while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
                if (c != 'h' && c != ':' && c != '?' && !allowed(which, c))
                        return cli_usage_error(cmd, "option '%s' does not apply here",
                                               argv[optind - 1]);
                if (cli_source_option(&src, c, optarg)) {
                        want_machine = true;
                        continue;
                }
                switch (c) {
                case OPT_JSON:
                        a.json = true;
                        break;
                case OPT_POLICY:
                        a.policy = optarg;
                        break;
                case OPT_RESERVED:
                        reserved = ncm_cpuset_free(reserved);
                        if (ncm_cpuset_parse_list(optarg, &reserved, &err) < 0)
                                return cli_usage_error(cmd, "--reserved '%s': %s", optarg, err.msg);
                        want_machine = true;
                        break;
                case OPT_STRICT:
                        a.strict = true;
                        want_machine = true;
                        break;
                case OPT_CONTAINER:
                        if (!parse_container(optarg, &refs[a.nrefs]))
                                return cli_usage_error(cmd,
                                                       "--container '%s': expected ID=POD/NAME",
                                                       optarg);
                        a.nrefs++;
                        break;
                case OPT_OUTPUT:
                        a.output = optarg;
                        break;
                case OPT_FIX_CHECKSUM:
                        a.fix_checksum = true;
                        break;
                case OPT_FIT:
                        a.fit = true;
                        break;
                case OPT_DROP:
                        drop[a.ndrop++] = optarg;
                        break;
                case OPT_RESERVED_MEMORY:
                        a.reserved_memory = optarg;
                        want_machine = true;
                        break;
                case OPT_KUBELET_VERSION:
                        if (ncm_kubelet_version_parse(optarg, &a.kubelet_version, &err) < 0 ||
                            ncm_kubelet_version_check(a.kubelet_version, &err) < 0)
                                return cli_usage_error(cmd, "--kubelet-version '%s': %s", optarg,
                                                       err.msg);
                        a.has_kubelet_version = true;
                        break;
                case 'h':
                        usage_sub(which, stdout);
                        return 0;
                case ':':
                        return cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
                default:
                        return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
                }
        }
        if (optind >= argc)
                return cli_usage_error(cmd, "missing FILE");
        if (optind + 1 < argc)
                return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind + 1]);
        if (cli_source_check(&src, cmd) != 0)
                return 2;
        /* show only marks --reserved; rewrite needs a machine only to --fit. */
        if (which == SUB_SHOW)
                want_machine = false;
        if (which == SUB_REWRITE && want_machine && !a.fit)
                return cli_usage_error(cmd, "a topology source, --reserved and --strict go with "
                                            "--fit");
        if (a.fit)
                want_machine = true;
        a.path = argv[optind];
        a.reserved = reserved;
        a.refs = refs;
        a.drop = drop;

        r = ncm_fs_read_all(AT_FDCWD, a.path, CHECKPOINT_MAX_SIZE, &text, &a.len, &err);
        if (r < 0)
                return cli_fail(r, &err);
        a.text = text;

        /* The kind, from the content. */
        for (size_t i = 0; kinds[i] && !kind; i++) {
                r = kinds[i]->probe(a.text, a.len, a.path, &err);
                if (r < 0)
                        return cli_fail(r, &err);
                if (r > 0)
                        kind = kinds[i];
        }
        if (!kind) {
                ncm_error_set(&err, EINVAL, "%s: not a checkpoint file nodecm knows (%s)", a.path,
                              "expected cpu_manager_state, memory_manager_state or "
                              "kubelet_internal_checkpoint");
                return cli_fail(-EINVAL, &err);
        }

        if (a.reserved_memory && kind != &cli_checkpoint_kind_memory) {
                ncm_error_set(&err, EINVAL, "%s: %s: --reserved-memory applies to %s files", a.path,
                              kind->name, NCM_MEM_CHECKPOINT_NAME);
                return cli_fail(-EINVAL, &err);
        }
        if (want_machine) {
                r = cli_source_load(&src, &topo, &err);
                if (r < 0)
                        return cli_fail(r, &err);
                a.topo = topo;
                a.topo_desc = cli_source_describe(&src, desc, sizeof(desc));
        }

        switch (which) {
        case SUB_VERIFY:
                r = kind->verify(&a, &out, &err);
                break;
        case SUB_SHOW:
                r = kind->show(&a, &out, &err);
                break;
        case SUB_REWRITE:
                /* the directory of the file written is a node's: rewrite under its lock */
                r = lock_dir_of(a.output ? a.output : a.path, &lockfd, &err);
                if (r >= 0)
                        r = kind->rewrite ? kind->rewrite(&a, &out, &err)
                                          : ncm_error_set(&err, ENOTSUP,
                                                          "%s: %s files cannot be rewritten",
                                                          a.path, kind->name);
                break;
        }
        if (r < 0) {
                ncm_buf_done(&out);
                return cli_fail(r, &err);
        }
        return cli_emit_buf(&out);
}

int cmd_checkpoint(int argc, char **argv)
{
        if (argc < 2) {
                usage(stderr);
                return 2;
        }
        if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
            strcmp(argv[1], "help") == 0) {
                usage(stdout);
                return 0;
        }
        for (size_t i = 0; i < NCM_ELEMENTSOF(sub_names); i++)
                if (strcmp(argv[1], sub_names[i]) == 0)
                        return run_sub((sub)i, argc - 1, argv + 1);
        return cli_usage_error("checkpoint", "unknown subcommand '%s'", argv[1]);
}
