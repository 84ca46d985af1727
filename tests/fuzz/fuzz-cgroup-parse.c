/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cgroup module's parsers on arbitrary input: cgroup file values ("max", cpu.max,
 * integers), /proc/PID/cgroup and mountinfo lines, controller lists, meminfo, the kubelet's
 * map flags (--kube-reserved, --eviction-hard, --capacity, --enforce-node-allocatable) and cgroup
 * paths of both naming drivers. Whatever parses must hold its invariants.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/cgroups.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count_pair(const char *k, size_t kl, const char *v, size_t vl, void *ud)
{
        (void)k;
        (void)v;
        if (kl > 1u << 20 || vl > 1u << 20)
                abort();
        (*(size_t *)ud)++;
        return 0;
}

static void values(const char *s)
{
        int64_t v, q, p;

        if (ncm_cgroup_parse_limit(s, &v) == 0 && v < -1)
                abort();
        (void)ncm_cgroup_parse_int64(s, &v);
        if (ncm_cgroup_parse_cpu_max(s, &q, &p) == 0 && (p <= 0 || q < -1))
                abort();
        if (ncm_cgroup_parse_meminfo_total(s, &v) == 0 && v < 0)
                abort();
}

static void lines(const char *s, size_t size)
{
        const char *p = s, *end = s + size;

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
                ncm_cgroup_proc_entry e;
                ncm_mountinfo_entry m;
                char buf[256];
                if (ncm_cgroup_parse_proc_cgroup_line(p, len, &e) == 0 &&
                    (e.path_len == 0 || e.path[0] != '/' || e.path + e.path_len > end))
                        abort();
                if (ncm_cgroup_parse_mountinfo_line(p, len, &m) == 0) {
                        if (m.mount_point + m.mount_point_len > end || m.fstype_len == 0)
                                abort();
                        if (ncm_cgroup_unescape_mount_path(m.mount_point, m.mount_point_len, buf,
                                                           sizeof(buf)) == 0 &&
                            strlen(buf) > m.mount_point_len)
                                abort();
                        (void)ncm_cgroup_parse_controllers(m.super_options, m.super_options_len);
                }
                (void)ncm_cgroup_parse_controllers(p, len);
                p += len + 1;
        }
}

static void flags(const char *s)
{
        ncm_eviction_thresholds t;
        ncm_resource_list l = {0};
        unsigned e;
        size_t n = 0;

        (void)ncm_cgroup_parse_map_flag(s, '=', count_pair, &n, NULL);
        (void)ncm_cgroup_parse_map_flag(s, '<', count_pair, &n, NULL);
        if (ncm_cgroup_parse_eviction_hard(s, &t, NULL) == 0) {
                for (size_t i = 0; i < t.n; i++)
                        if (t.items[i].is_percentage &&
                            !(t.items[i].percentage >= 0 && t.items[i].percentage <= 1))
                                abort();
        }
        if (ncm_cgroup_parse_reserved("--kube-reserved", s, &l, NULL) == 0) {
                for (size_t i = 1; i < l.n; i++)
                        if (strcmp(l.items[i - 1].name, l.items[i].name) >= 0)
                                abort();
        }
        ncm_resource_list_done(&l);
        if (ncm_cgroup_parse_capacity(s, &l, NULL) == 0) {
                ncm_node_allocatable na;
                ncm_eviction_thresholds d;
                ncm_cgroup_eviction_defaults(&d);
                if (ncm_cgroup_node_allocatable(&l, &l, NULL, &d, NCM_ENFORCE_PODS, &na, NULL) == 0)
                        ncm_node_allocatable_done(&na);
        }
        ncm_resource_list_done(&l);
        (void)ncm_cgroup_parse_enforce(s, "/k", "/s", &e, NULL);
}

static void paths(const char *s)
{
        const ncm_cgroup_naming_ops *ops[] = {&ncm_cgroup_naming_cgroupfs,
                                              &ncm_cgroup_naming_systemd};
        ncm_buf b = NCM_BUF_INIT;

        for (size_t i = 0; i < 2; i++) {
                ncm_cgroup_name n = NCM_CGROUP_NAME_INIT;
                if (ncm_cgroup_naming_from_path(ops[i], s, &n, NULL) == 0) {
                        if (ncm_cgroup_naming_to_path(&ncm_cgroup_naming_cgroupfs, &n, &b, NULL) <
                                            0 ||
                            b.data[0] != '/')
                                abort();
                        ncm_buf_reset(&b);
                        (void)ncm_cgroup_naming_to_path(&ncm_cgroup_naming_systemd, &n, &b, NULL);
                        ncm_buf_reset(&b);
                        ncm_cgroup_name_done(&n);
                }
        }
        if (ncm_cgroup_expand_slice(s, &b, NULL) == 0 && (!b.data || b.data[0] != '/'))
                abort();
        ncm_buf_done(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        char *s;

        if (size > 1u << 16)
                return 0;
        s = malloc(size + 1);
        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = '\0';
        values(s);
        lines(s, strlen(s));
        flags(s);
        paths(s);
        free(s);
        return 0;
}
