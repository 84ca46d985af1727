/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The memory manager's memory_manager_state as a kind of `nodecm checkpoint`.
 *
 * verify: read as the kubelet of --kubelet-version reads it (the newest by default: the 1.37
 * dual layout, then V2, then V1) and, with a machine (a topology source with memory, and the
 * reservation as --reserved-memory), run the Static policy's start-up validation. show: the
 * layout, both checksums, the machine state per NUMA node and every container's blocks.
 * rewrite: the file in its generation's exact bytes (or --kubelet-version's), with --drop for
 * drained pods, --fix-checksum for a hand-edited file and --fit to re-baseline the machine state
 * on this machine (KEP-6232's drift, a changed reservation) keeping every assignment.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <nodecm/fs.h>
#include <nodecm/memorymanager.h>
#include "inspect-internal.h"

static int memory_probe(const char *text, size_t len, const char *path, ncm_error *err)
{
        return ncm_mem_checkpoint_probe(text, len, path, err);
}

static const char *layout_name(ncm_mem_checkpoint_version v)
{
        switch (v) {
        case NCM_MEM_CHECKPOINT_V3:
                return "V3 (the 1.37 dual layout: data and dataChecksum)";
        case NCM_MEM_CHECKPOINT_V2:
                return "V2 (1.36, podEntries)";
        default:
                return "V1 (up to 1.35)";
        }
}

/* The options of a CPU manager configuration mean nothing for this file. */
static int refuse_cpu_options(const ncm_checkpoint_args *a, ncm_error *err)
{
        if (a->reserved || a->strict || a->nrefs)
                return ncm_error_set(err, EINVAL,
                                     "%s: %s: --reserved, --strict and --container apply to "
                                     "cpu_manager_state files (the memory manager's reservation "
                                     "is --reserved-memory)",
                                     a->path, NCM_MEM_CHECKPOINT_NAME);
        return 0;
}

/*
 * The file as the kubelet reads it. LENIENT (show, rewrite --fix-checksum): decoded whatever
 * its checksums say; then 1 when they do not match.
 */
static int parse(const ncm_checkpoint_args *a, bool lenient, ncm_mem_state **ret,
                 ncm_mem_checkpoint_info *info, ncm_error *err)
{
        int r = refuse_cpu_options(a, err);

        if (r < 0)
                return r;
        if (lenient) {
                r = ncm_mem_checkpoint_decode(a->text, a->len, a->path, ret, info, err);
                if (r < 0)
                        return r;
                if (a->policy && strcmp(a->policy, (*ret)->policy) != 0) {
                        ncm_error_set(err, NCM_E_INVALID_STATE,
                                      "%s: [memorymanager] configured policy \"%s\" differs from "
                                      "state checkpoint policy \"%s\"",
                                      a->path, a->policy, (*ret)->policy);
                        *ret = ncm_mem_state_free(*ret);
                        return -NCM_E_INVALID_STATE;
                }
                return info->verified ? 0 : 1;
        }
        r = ncm_mem_checkpoint_parse(a->text, a->len, a->path, a->kubelet_version, a->policy, true,
                                     ret, info, err);
        if (r < 0 && r != -ENOMEM && r != -NCM_E_CHECKSUM && r != -NCM_E_INVALID_STATE && err)
                /* JSON the kubelet cannot decode: it refuses to start on it */
                r = -(err->code = NCM_E_INVALID_STATE);
        return r;
}

static void machine_json(const ncm_mem_state *s, ncm_buf *out)
{
        ncm_buf_putc(out, '[');
        for (size_t i = 0; i < s->nnodes; i++) {
                const ncm_mem_node *nd = &s->nodes[i];
                ncm_buf_printf(out, "%s{\"id\":%d,\"numberOfAssignments\":%" PRId64 ",\"cells\":[",
                               i ? "," : "", nd->id, nd->assignments);
                for (size_t k = 0; k < nd->ncells; k++)
                        ncm_buf_printf(out, "%s%d", k ? "," : "", nd->cells[k]);
                ncm_buf_puts(out, "],\"memoryMap\":{");
                for (size_t k = 0; k < nd->ntypes; k++) {
                        const ncm_mem_type *t = &nd->types[k];
                        ncm_buf_puts(out, k ? "," : "");
                        ncm_buf_json_string(out, t->name, strlen(t->name));
                        ncm_buf_printf(out,
                                       ":{\"total\":%" PRIu64 ",\"systemReserved\":%" PRIu64
                                       ",\"allocatable\":%" PRIu64 ",\"reserved\":%" PRIu64
                                       ",\"free\":%" PRIu64 "}",
                                       t->t.total, t->t.system_reserved, t->t.allocatable,
                                       t->t.reserved, t->t.free);
                }
                ncm_buf_puts(out, "}}");
        }
        ncm_buf_putc(out, ']');
}

/* The policy for the machine of A (Static with --reserved-memory). */
static int policy_of(const ncm_checkpoint_args *a, const char *name, ncm_mem_policy **ret,
                     ncm_error *err)
{
        ncm_mem_reservations l = {0};
        ncm_mem_policy_config c = {.policy = name, .reserved = &l};
        int r = 0;

        if (a->reserved_memory)
                r = ncm_mem_reservations_parse_flag(a->reserved_memory, &l, err);
        if (r >= 0)
                r = ncm_mem_reservations_validate(&l, err);
        if (r < 0) {
                ncm_mem_reservations_done(&l);
                return ncm_error_prefix(err, "--reserved-memory");
        }
        r = ncm_mem_policy_new(a->topo, &c, ret, err);
        ncm_mem_reservations_done(&l);
        return r;
}

static void counts(const ncm_mem_state *s, size_t *pods, size_t *containers)
{
        *pods = s->npods;
        *containers = 0;
        for (size_t i = 0; i < s->npods; i++)
                *containers += s->pods[i].n;
}

static int memory_verify(const ncm_checkpoint_args *a, ncm_buf *out, ncm_error *err)
{
        ncm_autoptr(ncm_mem_state) s = NULL;
        ncm_autoptr(ncm_mem_policy) p = NULL;
        ncm_mem_checkpoint_info info;
        size_t pods, ctrs;
        bool drifted = false;
        int r = parse(a, false, &s, &info, err);

        if (r < 0)
                return r;
        if (a->topo) {
                r = policy_of(a, s->policy[0] ? s->policy : "Static", &p, err);
                if (r < 0)
                        return ncm_error_prefix(err, "%s", a->path);
                r = ncm_mem_policy_start(p, s, &drifted, err);
                if (r < 0)
                        return ncm_error_prefix(err, "%s: the kubelet would refuse to start on %s",
                                                a->path, a->topo_desc);
        }
        counts(s, &pods, &ctrs);
        ncm_buf_printf(out, "%s: %s %s, policy %s, %zu NUMA node%s, %zu pod%s, %zu container%s, ",
                       a->path, NCM_MEM_CHECKPOINT_NAME, layout_name(info.version), s->policy,
                       s->nnodes, s->nnodes == 1 ? "" : "s", pods, pods == 1 ? "" : "s", ctrs,
                       ctrs == 1 ? "" : "s");
        if (info.version == NCM_MEM_CHECKPOINT_V3)
                ncm_buf_printf(out, "dataChecksum %" PRIu64 " verified", info.data_checksum);
        else if (info.checksum == 0)
                ncm_buf_puts(out, "checksum 0 (not verified, as the kubelet accepts it)");
        else
                ncm_buf_printf(out, "checksum %" PRIu64 " verified", info.checksum);
        if (a->topo)
                ncm_buf_printf(out, ", valid on %s", a->topo_desc);
        ncm_buf_puts(out, ": valid\n");
        return 0;
}

static void human_blocks(ncm_buf *out, const ncm_mem_block *v, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                ncm_buf_printf(out, "%s%s %" PRIu64 " on NUMA", i ? ", " : "", v[i].type,
                               v[i].size);
                for (size_t k = 0; k < v[i].nnuma; k++)
                        ncm_buf_printf(out, "%s%d", k ? "," : " ", v[i].numa[k]);
        }
}

static void json_blocks(ncm_buf *out, const ncm_mem_block *v, size_t n)
{
        ncm_buf_putc(out, '[');
        for (size_t i = 0; i < n; i++) {
                ncm_buf_puts(out, i ? ",{\"numaAffinity\":[" : "{\"numaAffinity\":[");
                for (size_t k = 0; k < v[i].nnuma; k++)
                        ncm_buf_printf(out, "%s%d", k ? "," : "", v[i].numa[k]);
                ncm_buf_puts(out, "],\"type\":");
                ncm_buf_json_string(out, v[i].type, strlen(v[i].type));
                ncm_buf_printf(out, ",\"size\":%" PRIu64 "}", v[i].size);
        }
        ncm_buf_putc(out, ']');
}

static int memory_show(const ncm_checkpoint_args *a, ncm_buf *out, ncm_error *err)
{
        ncm_autoptr(ncm_mem_state) s = NULL;
        ncm_mem_checkpoint_info info = {0};
        uint32_t legacy = 0, v2 = 0, data = 0;
        int r = parse(a, true, &s, &info, err);

        if (r < 0)
                return r;
        (void)ncm_mem_checkpoint_sums(s, &legacy, &v2, &data);
        if (a->json) {
                ncm_buf_printf(out,
                               "{\"kind\":\"%s\",\"layout\":\"V%d\",\"verified\":%s,\"checksum\":"
                               "%" PRIu64 ",\"computed\":{\"legacy\":%" PRIu32 ",\"v2\":%" PRIu32
                               ",\"data\":%" PRIu32 "},\"policyName\":",
                               NCM_MEM_CHECKPOINT_NAME, (int)info.version,
                               r == 0 ? "true" : "false", info.checksum, legacy, v2, data);
                ncm_buf_json_string(out, s->policy, strlen(s->policy));
                ncm_buf_puts(out, ",\"machineState\":");
                machine_json(s, out);
                ncm_buf_puts(out, ",\"entries\":{");
                for (size_t i = 0; i < s->npods; i++) {
                        ncm_buf_puts(out, i ? "," : "");
                        ncm_buf_json_string(out, s->pods[i].uid, strlen(s->pods[i].uid));
                        ncm_buf_puts(out, ":{");
                        for (size_t k = 0; k < s->pods[i].n; k++) {
                                ncm_buf_puts(out, k ? "," : "");
                                ncm_buf_json_string(out, s->pods[i].c[k].name,
                                                    strlen(s->pods[i].c[k].name));
                                ncm_buf_putc(out, ':');
                                json_blocks(out, s->pods[i].c[k].blocks, s->pods[i].c[k].n);
                        }
                        ncm_buf_putc(out, '}');
                }
                ncm_buf_puts(out, "}}\n");
                return 0;
        }
        ncm_buf_printf(out, "kind:         %s %s\n", NCM_MEM_CHECKPOINT_NAME,
                       layout_name(info.version));
        if (r == 0)
                ncm_buf_printf(out, "checksum:     %" PRIu64 " verified\n",
                               info.version == NCM_MEM_CHECKPOINT_V3 ? info.data_checksum
                                                                     : info.checksum);
        else
                ncm_buf_printf(out,
                               "checksum:     %" PRIu64 " does not match (computed: %" PRIu32
                               " as <= 1.35, %" PRIu32 " as 1.36); kubelet: checkpoint is "
                               "corrupted\n",
                               info.checksum, legacy, v2);
        ncm_buf_printf(out, "policy:       %s\n", s->policy);
        for (size_t i = 0; i < s->nnodes; i++) {
                const ncm_mem_node *nd = &s->nodes[i];
                ncm_buf_printf(out, "NUMA node %d: %" PRId64 " assignment%s, cells", nd->id,
                               nd->assignments, nd->assignments == 1 ? "" : "s");
                for (size_t k = 0; k < nd->ncells; k++)
                        ncm_buf_printf(out, "%s%d", k ? "," : " ", nd->cells[k]);
                ncm_buf_putc(out, '\n');
                for (size_t k = 0; k < nd->ntypes; k++) {
                        const ncm_mem_type *t = &nd->types[k];
                        if (t->nil) {
                                ncm_buf_printf(out, "  %-14s (null)\n", t->name);
                                continue;
                        }
                        ncm_buf_printf(out,
                                       "  %-14s total %" PRIu64 ", system reserved %" PRIu64
                                       ", allocatable %" PRIu64 ", reserved %" PRIu64
                                       ", free %" PRIu64 "\n",
                                       t->name, t->t.total, t->t.system_reserved, t->t.allocatable,
                                       t->t.reserved, t->t.free);
                }
        }
        for (size_t i = 0; i < s->npods; i++)
                for (size_t k = 0; k < s->pods[i].n; k++) {
                        ncm_buf_printf(out, "pod %s container %s: ", s->pods[i].uid,
                                       s->pods[i].c[k].name);
                        human_blocks(out, s->pods[i].c[k].blocks, s->pods[i].c[k].n);
                        ncm_buf_putc(out, '\n');
                }
        for (size_t i = 0; i < s->npod_entries; i++) {
                ncm_buf_printf(out, "pod %s (podEntries): ", s->pod_entries[i].uid);
                human_blocks(out, s->pod_entries[i].blocks, s->pod_entries[i].n);
                ncm_buf_putc(out, '\n');
        }
        return 0;
}

static int memory_rewrite(const ncm_checkpoint_args *a, ncm_buf *out, ncm_error *err)
{
        ncm_autoptr(ncm_mem_state) s = NULL;
        ncm_autoptr(ncm_mem_policy) p = NULL;
        ncm_mem_checkpoint_info info;
        ncm_mem_checkpoint_version version;
        const char *target = a->output ? a->output : a->path;
        ncm_buf text = NCM_BUF_INIT;
        int fixed, dropped = 0, r;

        fixed = parse(a, a->fix_checksum, &s, &info, err);
        if (fixed < 0) {
                if (fixed == -NCM_E_CHECKSUM && err) {
                        char msg[NCM_ERROR_MSG_MAX];
                        snprintf(msg, sizeof(msg), "%s", err->msg);
                        ncm_error_set(err, NCM_E_CHECKSUM,
                                      "%s (--fix-checksum accepts the content as it is)", msg);
                }
                return fixed;
        }
        version = a->has_kubelet_version ? ncm_mem_checkpoint_version_of(a->kubelet_version)
                                         : info.version;
        for (size_t i = 0; i < a->ndrop; i++) {
                ncm_mem_policy *none = NULL;
                ncm_mem_policy_config c = {.policy = "None"};
                const ncm_mem_pod *pod = NULL;
                for (size_t k = 0; k < s->npods; k++)
                        if (strcmp(s->pods[k].uid, a->drop[i]) == 0)
                                pod = &s->pods[k];
                if (!pod)
                        return ncm_error_set(err, NCM_E_NOT_FOUND, "%s: --drop %s: no such pod",
                                             a->path, a->drop[i]);
                /* RemoveContainer for each: the machine state gives their memory back */
                r = ncm_mem_policy_new(a->topo, &c, &none, err);
                while (r >= 0 && pod && pod->n) {
                        char name[512];
                        snprintf(name, sizeof(name), "%s", pod->c[0].name);
                        r = ncm_mem_policy_remove(none, s, a->drop[i], name);
                        if (r == 0)
                                (void)ncm_mem_state_delete(s, a->drop[i], name);
                        dropped++;
                        pod = NULL;
                        for (size_t k = 0; k < s->npods; k++)
                                if (strcmp(s->pods[k].uid, a->drop[i]) == 0)
                                        pod = &s->pods[k];
                }
                ncm_mem_policy_free(none);
                if (r < 0)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                (void)ncm_mem_state_delete_pod(s, a->drop[i]);
        }
        if (a->fit) {
                r = policy_of(a, s->policy[0] ? s->policy : "Static", &p, err);
                if (r >= 0)
                        r = ncm_mem_policy_fit(p, s, err);
                if (r < 0)
                        return ncm_error_prefix(err, "%s: --fit on %s", a->path, a->topo_desc);
        }
        ncm_mem_checkpoint_format(s, version, &text);
        if (ncm_buf_failed(&text)) {
                ncm_buf_done(&text);
                return ncm_error_set(err, ENOMEM, "%s: out of memory", a->path);
        }
        if (!a->output && text.len == a->len && memcmp(text.data, a->text, a->len) == 0) {
                ncm_buf_printf(out, "%s: already in the kubelet's form (%s), left as it is\n",
                               a->path, layout_name(version));
                ncm_buf_done(&text);
                return 0;
        }
        r = ncm_fs_write_atomic(AT_FDCWD, target, text.data, text.len, 0600, err);
        ncm_buf_done(&text);
        if (r < 0)
                return r;
        ncm_buf_printf(out, "%s: written as %s %s%s", target, NCM_MEM_CHECKPOINT_NAME,
                       layout_name(version), fixed > 0 ? ", checksum recomputed" : "");
        if (dropped)
                ncm_buf_printf(out, "; %d container%s of drained pods removed", dropped,
                               dropped == 1 ? "" : "s");
        if (a->fit)
                ncm_buf_printf(out, "; machine state fitted to %s", a->topo_desc);
        ncm_buf_putc(out, '\n');
        return 0;
}

const ncm_checkpoint_kind ncm__checkpoint_kind_memory = {
                .name = NCM_MEM_CHECKPOINT_NAME,
                .probe = memory_probe,
                .verify = memory_verify,
                .show = memory_show,
                .rewrite = memory_rewrite,
};
