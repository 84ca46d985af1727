/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cpu_manager_state: writing it as a kubelet release writes it, and the kubelet's
 * NewCheckpointState (read or create, restore) on top of the reader in checkpoint.c.
 *
 * encoding/json output of the kubelet's structs: fields in declaration order, map keys sorted
 * bytewise, "entries" omitted when empty (omitempty), compact, Go's string escaping (<, >, &,
 * U+2028 and U+2029 escaped; ncm_buf_json_string()). Two layouts (docs/checkpoints.md):
 *  - V2 (up to 1.36) {"policyName","defaultCpuSet","entries","checksum"}, the checksum FNV-1a of
 *    the go-spew rendering named state.CPUManagerCheckpoint. 1.36 writes it so (its V2 type was
 *    renamed CPUManagerCheckpointV2, but PR #137751 replaces the name back before hashing, so
 *    that a 1.35 kubelet reads what 1.36 wrote).
 *  - V4 (1.37, PR #139102): CPUManagerCheckpoint embeds CPUManagerCheckpointV2, so the same
 *    four fields come first, written and checksummed exactly as V2 (a kubelet up to 1.36 reads
 *    them and ignores the rest), then "data", the json.Marshal of CPUManagerCheckpointData
 *    {"policyName","defaultCpuSet","entries","podEntries","baselines"} as a string, and
 *    "dataChecksum", checksum.New(data): FNV-1a of dump.ForHash(string), "(string)" + data.
 *    "baselines" (PR #140314) holds each container's CPUs of its first admission,
 *    {"<pod>":{"<container>":{"baseline":"<cpus>"}}}, nodecm's promise.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nodecm/cpustate.h>
#include <nodecm/fs.h>
#include "base/kubelet-checkpoint.h"
#include "cpumanager/checkpoint-internal.h"

static void json_str(ncm_buf *b, const char *s)
{
        ncm_buf_json_string(b, s, strlen(s));
}

/*
 * ,"<MEMBER>":{"<pod>":{"<container>":<cpus>}} for the pods and containers that keep a promise,
 * <cpus> a string, or with WRAP the kubelet's ContainerCPUs {"baseline":"<cpus>"}.
 */
static void format_promised(const ncm_cpu_state *s, const char *member, bool wrap, ncm_buf *b)
{
        bool first_pod = true;

        ncm_buf_printf(b, ",\"%s\":{", member);
        for (size_t i = 0; i < ncm_cpu_state_num_pods(s); i++) {
                bool first = true;
                for (size_t j = 0; j < ncm_cpu_state_pod_num_containers(s, i); j++) {
                        const ncm_cpuset *p = ncm_cpu_state_container_promised(s, i, j);
                        if (!p)
                                continue;
                        if (first) {
                                if (!first_pod)
                                        ncm_buf_putc(b, ',');
                                json_str(b, ncm_cpu_state_pod_uid(s, i));
                                ncm_buf_puts(b, ":{");
                                first_pod = first = false;
                        } else {
                                ncm_buf_putc(b, ',');
                        }
                        json_str(b, ncm_cpu_state_container_name(s, i, j));
                        ncm_buf_puts(b, wrap ? ":{\"baseline\":\"" : ":\"");
                        ncm_cpuset_format_list_buf(p, b);
                        ncm_buf_puts(b, wrap ? "\"}" : "\"");
                }
                if (!first)
                        ncm_buf_putc(b, '}');
        }
        ncm_buf_putc(b, '}');
}

/* {"policyName":…,"defaultCpuSet":…[,"entries":{…}] of C, without the closing brace. */
static void format_fields(const ncm_cpu_checkpoint *c, ncm_buf *b)
{
        ncm_buf_puts(b, "{\"policyName\":");
        json_str(b, c->policy_name);
        ncm_buf_puts(b, ",\"defaultCpuSet\":");
        json_str(b, c->default_cpus);
        if (!c->npods)
                return;
        ncm_buf_puts(b, ",\"entries\":{");
        for (size_t i = 0; i < c->npods; i++) {
                const ncm_cpu_checkpoint_pod *p = &c->pods[i];
                if (i)
                        ncm_buf_putc(b, ',');
                json_str(b, p->uid);
                ncm_buf_puts(b, ":{");
                for (size_t j = 0; j < p->n; j++) {
                        if (j)
                                ncm_buf_putc(b, ',');
                        json_str(b, p->entries[j].name);
                        ncm_buf_putc(b, ':');
                        json_str(b, p->entries[j].cpus);
                }
                ncm_buf_putc(b, '}');
        }
        ncm_buf_putc(b, '}');
}

/* V4's data member and dataChecksum for S, appended to B. */
static void format_data(const ncm_cpu_state *s, const ncm_cpu_checkpoint *c, ncm_buf *b)
{
        ncm_buf data = NCM_BUF_INIT, hashed = NCM_BUF_INIT;
        uint32_t sum = 0;

        format_fields(c, &data);
        if (ncm_cpu_state_has_promised(s))
                format_promised(s, "baselines", true, &data);
        ncm_buf_putc(&data, '}');
        ncm_buf_puts(&hashed, "(string)");
        ncm_buf_append(&hashed, data.data, data.len);
        /* ncm__spew_sum() releases HASHED whatever happens */
        if (ncm__spew_sum(&hashed, &sum) < 0 || ncm_buf_failed(&data)) {
                b->oom = true;
        } else {
                ncm_buf_puts(b, ",\"data\":");
                ncm_buf_json_string(b, data.data, data.len);
                ncm_buf_printf(b, ",\"dataChecksum\":%" PRIu32, sum);
        }
        ncm_buf_done(&data);
}

void ncm_cpu_checkpoint_format_state(const ncm_cpu_state *s, ncm_buf *b)
{
        ncm_autoptr(ncm_cpu_checkpoint) c = ncm__cpu_checkpoint_of_state(s);
        bool v4 = ncm_cpu_checkpoint_format_of(ncm_cpu_state_kubelet_version(s)) ==
                  NCM_CPU_CHECKPOINT_V4;

        if (!c) {
                /* Make the failure visible through the buffer's sticky flag. */
                b->oom = true;
                return;
        }
        format_fields(c, b);
        if (!v4 && ncm_cpu_state_has_promised(s))
                format_promised(s, "promised", false, b);
        ncm_buf_printf(b, ",\"checksum\":%" PRIu64, c->checksum);
        if (v4)
                format_data(s, c, b);
        ncm_buf_putc(b, '}');
}

int ncm_cpu_checkpoint_write_flags(const ncm_cpu_state *s, int rootfd, const char *path,
                                   unsigned flags, ncm_error *err)
{
        ncm_buf b = NCM_BUF_INIT;
        int r;
        ncm_cpu_checkpoint_format_state(s, &b);
        if (ncm_buf_failed(&b)) {
                ncm_buf_done(&b);
                return ncm_error_set(err, ENOMEM, "%s: out of memory", path);
        }
        r = ncm_fs_write_atomic_flags(rootfd, path, b.data, b.len, 0600, flags, err);
        ncm_buf_done(&b);
        return r;
}

int ncm_cpu_checkpoint_write(const ncm_cpu_state *s, int rootfd, const char *path, ncm_error *err)
{
        return ncm_cpu_checkpoint_write_flags(s, rootfd, path, 0, err);
}

typedef struct attach_target {
        int rootfd;
        char *path;
} attach_target;

static int attach_persist(const ncm_cpu_state *s, void *userdata, ncm_error *err)
{
        const attach_target *t = userdata;
        return ncm_cpu_checkpoint_write(s, t->rootfd, t->path, err);
}

static void attach_free(void *userdata)
{
        attach_target *t = userdata;
        if (t->rootfd >= 0)
                (void)close(t->rootfd);
        free(t->path);
        free(t);
}

int ncm_cpu_state_attach_checkpoint(ncm_cpu_state *s, int rootfd, const char *path, ncm_error *err)
{
        attach_target *t = calloc(1, sizeof(*t));
        if (!t)
                return ncm_error_set(err, ENOMEM, "%s: out of memory", path);
        t->rootfd = rootfd;
        if (rootfd != AT_FDCWD) {
                t->rootfd = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
                if (t->rootfd < 0) {
                        int e = errno;
                        free(t);
                        return ncm_error_errno(err, e, "%s: duplicate directory fd", path);
                }
        }
        t->path = strdup(path);
        if (!t->path) {
                attach_free(t);
                return ncm_error_set(err, ENOMEM, "%s: out of memory", path);
        }
        ncm_cpu_state_set_persist(s, attach_persist, t, attach_free);
        return 0;
}

/* kubelet's wrapper around every restore failure. */
static int restore_failed(ncm_error *err, int code, const char *cause, const char *path)
{
        ncm_buf b = NCM_BUF_INIT;
        int r;
        ncm_buf_puts(&b, "could not restore state from checkpoint: ");
        ncm_buf_puts(&b, cause);
        ncm_buf_puts(&b, ", please drain this node and delete the CPU manager checkpoint file ");
        ncm_buf_go_quote(&b, path, strlen(path));
        ncm_buf_puts(&b, " before restarting Kubelet");
        r = ncm_error_set(err, code, "%s", b.data ? b.data : cause);
        ncm_buf_done(&b);
        return r;
}

int ncm_cpu_checkpoint_load_version(int rootfd, const char *path, const char *policy_name,
                                    const ncm_container_ref *refs, size_t nrefs,
                                    ncm_kubelet_version v, ncm_cpu_state **ret, ncm_error *err)
{
        ncm_autofree char *text = NULL;
        ncm_autoptr(ncm_cpu_checkpoint) c = NULL;
        ncm_autoptr(ncm_cpu_state) s = NULL;
        char kmsg[CKPT_MSG_MAX] = "";
        ncm_error e = NCM_ERROR_INIT;
        size_t len = 0;
        int r;

        r = ncm_kubelet_version_check(v, err);
        if (r < 0)
                return r;
        r = ncm_fs_read_all(rootfd, path, NCM_CPU_CHECKPOINT_MAX_SIZE, &text, &len, &e);
        if (r == -ENOENT) {
                /* Absent: start empty and write it, as the kubelet's storeState does. */
                s = ncm_cpu_state_new(policy_name);
                if (!s)
                        return ncm_error_set(err, ENOMEM, "%s: out of memory", path);
                ncm_cpu_state_set_kubelet_version(s, v);
                r = ncm_cpu_checkpoint_write(s, rootfd, path, err);
                if (r < 0)
                        return r;
                *ret = NCM_TAKE_PTR(s);
                return 1;
        }
        if (r < 0) {
                if (err)
                        *err = e;
                return r;
        }
        r = ncm__cpu_checkpoint_parse_full(text, len, path, v, &c, kmsg, &e);
        if (r == -ENOMEM || r == -EFBIG) {
                if (err)
                        *err = e;
                return r;
        }
        if (r < 0)
                return restore_failed(err, NCM_E_INVALID_STATE, kmsg, path);
        r = ncm_cpu_checkpoint_restore(c, policy_name, refs, nrefs, &s, &e);
        if (r == -ENOMEM) {
                if (err)
                        *err = e;
                return r;
        }
        if (r < 0)
                return restore_failed(err,
                                      c->match == NCM_CPU_CHECKSUM_MISMATCH ? NCM_E_CHECKSUM
                                                                            : NCM_E_INVALID_STATE,
                                      e.msg, path);
        *ret = NCM_TAKE_PTR(s);
        return 0;
}

int ncm_cpu_checkpoint_load(int rootfd, const char *path, const char *policy_name,
                            const ncm_container_ref *refs, size_t nrefs, ncm_cpu_state **ret,
                            ncm_error *err)
{
        return ncm_cpu_checkpoint_load_version(rootfd, path, policy_name, refs, nrefs,
                                               NCM_KUBELET_VERSION_DEFAULT, ret, err);
}
