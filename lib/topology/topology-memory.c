/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Memory per NUMA node, read as cadvisor reads it for the kubelet's memory manager
 * (GetNodesInfo: getNodeMemInfo and GetHugePagesInfo), and nodecm's override syntax for machines
 * that have no files to read (a synthetic description, a scenario).
 *
 * cadvisor's rules, which decide what the memory manager's machine state holds:
 *  - nodeN/meminfo missing: the node has 0 bytes (a warning in cadvisor, not an error);
 *    present, it must match `MemTotal:\s*([0-9]+) kB` (the first match), else cadvisor fails;
 *  - nodeN/hugepages missing: no pools; present, every entry's name is split at "-" and its
 *    second part at "kB" for the page size (ParseUint), and its nr_hugepages is read with
 *    Sscanf("%d"); a failure of either fails the machine.
 * Those failures stop the kubelet (it cannot get its machine info), so nodecm refuses them with
 * the file named.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/fs.h>
#include <nodecm/quantity.h>
#include <nodecm/topology.h>
#include "base/fs-beneath.h"
#include "topology/topology-internal.h"

#define NODE_DIR "/sys/devices/system/node"

/* Go's regexp \s: [\t\n\f\r ]. */
static bool go_space(char c)
{
        return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

int ncm__mem_meminfo_total(const char *s, size_t len, uint64_t *ret)
{
        static const char key[] = "MemTotal:";
        const size_t klen = sizeof(key) - 1;

        for (size_t i = 0; i + klen <= len; i++) {
                const char *p, *end = s + len;
                uint64_t v = 0;
                bool over = false;
                size_t nd = 0;

                if (memcmp(s + i, key, klen) != 0)
                        continue;
                p = s + i + klen;
                while (p < end && go_space(*p))
                        p++;
                for (; p < end && *p >= '0' && *p <= '9'; p++, nd++) {
                        if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
                                over = true;
                        v = v * 10 + (uint64_t)(*p - '0');
                }
                /* the regexp needs digits, one space and "kB" right after them */
                if (nd == 0 || end - p < 3 || memcmp(p, " kB", 3) != 0)
                        continue;
                /* the match is found; ParseUint of the digits, then * 1024 (wrapping, as Go) */
                if (over)
                        return -ERANGE;
                *ret = v * 1024;
                return 0;
        }
        return -EINVAL;
}

int ncm__mem_hugepages_size(const char *name, uint64_t *ret)
{
        const char *dash = strchr(name, '-'), *p, *end;
        uint64_t v = 0;

        if (!dash)
                return -EINVAL; /* Go would index past the split; no kernel names it so */
        p = dash + 1;
        end = strchr(p, '-');
        if (!end)
                end = p + strlen(p);
        /* strings.Split(part, "kB")[0] */
        for (const char *k = p; k + 1 < end; k++)
                if (k[0] == 'k' && k[1] == 'B') {
                        end = k;
                        break;
                }
        if (p == end)
                return -EINVAL;
        for (; p < end; p++) {
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
                        return -ERANGE;
                v = v * 10 + (uint64_t)(*p - '0');
        }
        *ret = v;
        return 0;
}

/* The hugepage pools of DIR (a node's hugepages directory) into *RET / *N; its files are opened
 * from NODESFD (NODE_DIR, or -1) where they can be (base/fs-beneath.h). */
static int read_pools(int rootfd, int nodesfd, const char *dir, ncm_hugepages **ret, size_t *ret_n,
                      ncm_error *err)
{
        DIR *d = NULL;
        struct dirent *de;
        ncm_hugepages *v = NULL;
        size_t n = 0;
        int r, fd = ncm__fs_openat_beneath(rootfd, nodesfd, dir,
                                           ncm__fs_below(dir, NODE_DIR, sizeof(NODE_DIR) - 1),
                                           O_RDONLY | O_DIRECTORY, NULL);

        *ret = NULL;
        *ret_n = 0;
        if (fd >= 0 && !(d = fdopendir(fd)))
                close(fd);
        if (!d)
                return 0; /* cadvisor: hugepages may be disabled; not an error */
        while ((de = readdir(d))) {
                char path[768], buf[64];
                const char *p;
                uint64_t size;
                int64_t pages;
                ssize_t len;
                ncm_hugepages *nv;

                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
                r = ncm__mem_hugepages_size(de->d_name, &size);
                if (r < 0) {
                        r = ncm_error_set(err, EINVAL, "%s: not a hugepage size", path);
                        goto fail;
                }
                snprintf(path, sizeof(path), "%s/%s/nr_hugepages", dir, de->d_name);
                len = ncm__fs_read_beneath(rootfd, nodesfd, path,
                                           ncm__fs_below(path, NODE_DIR, sizeof(NODE_DIR) - 1), buf,
                                           sizeof(buf) - 1, err);
                if (len < 0) {
                        r = (int)len;
                        goto fail;
                }
                buf[len] = '\0';
                p = buf;
                if (!ncm__cad_scan_int(&p, buf + len, true, &pages)) {
                        r = ncm_error_set(err, EINVAL,
                                          "%s: could not parse file nr_hugepage for %s, contents "
                                          "\"%.32s\"",
                                          path, de->d_name, buf);
                        goto fail;
                }
                nv = realloc(v, (n + 1) * sizeof(*v));
                if (!nv) {
                        r = ncm_error_set(err, ENOMEM, "out of memory");
                        goto fail;
                }
                v = nv;
                v[n].page_size = size;
                v[n].num_pages = (uint64_t)pages;
                n++;
        }
        closedir(d);
        *ret = v;
        *ret_n = n;
        return 0;
fail:
        closedir(d);
        free(v);
        return r;
}

/* What LISTED says of node ID's directory: NULL when it does not cover the node. */
static const ncm__mem_listed *listed_node(const ncm__mem_listed *listed, size_t n, int id)
{
        for (size_t i = 0; i < n; i++)
                if (listed[i].id == id)
                        return &listed[i];
        return NULL;
}

int ncm_topo_read_memory_sysfs(ncm_topo *t, int rootfd, ncm_error *err)
{
        ncm_error e = NCM_ERROR_INIT;
        ncm_autoclose int nodesfd = ncm_fs_openat(rootfd, NODE_DIR, O_PATH | O_DIRECTORY, 0, &e);
        return ncm__topo_read_memory_listed(t, rootfd, nodesfd, NULL, 0, err);
}

int ncm__topo_read_memory_listed(ncm_topo *t, int rootfd, int nodesfd,
                                 const ncm__mem_listed *listed, size_t nlisted, ncm_error *err)
{
        size_t nn;
        const int *ids = ncm_topo_numa_ids(t, &nn);

        for (size_t i = 0; i < nn; i++) {
                const ncm__mem_listed *l = listed_node(listed, nlisted, ids[i]);
                char path[256], buf[8192];
                ncm_hugepages *hp = NULL;
                size_t nhp = 0;
                uint64_t bytes = 0;
                ssize_t len = -ENOENT;
                int r;

                if (!l) {
                        int fd;
                        snprintf(path, sizeof(path), NODE_DIR "/node%d", ids[i]);
                        fd = ncm__fs_openat_beneath(
                                        rootfd, nodesfd, path,
                                        ncm__fs_below(path, NODE_DIR, sizeof(NODE_DIR) - 1), O_PATH,
                                        NULL); /* ncm_fs_exists() */
                        if (fd < 0)
                                continue; /* no node directory: a machine grouped by package */
                        close(fd);
                }
                snprintf(path, sizeof(path), NODE_DIR "/node%d/meminfo", ids[i]);
                if (!l || l->meminfo)
                        len = ncm__fs_read_beneath(
                                        rootfd, nodesfd, path,
                                        ncm__fs_below(path, NODE_DIR, sizeof(NODE_DIR) - 1), buf,
                                        sizeof(buf), NULL);
                if (len >= 0) {
                        r = ncm__mem_meminfo_total(buf, (size_t)len, &bytes);
                        if (r < 0)
                                return ncm_error_set(err, -r,
                                                     "%s: no \"MemTotal: N kB\" line (cadvisor: "
                                                     "failed to match regexp)",
                                                     path);
                }
                snprintf(path, sizeof(path), NODE_DIR "/node%d/hugepages", ids[i]);
                r = !l || l->hugepages ? read_pools(rootfd, nodesfd, path, &hp, &nhp, err) : 0;
                if (r < 0)
                        return r;
                r = ncm_topo_set_numa_memory(t, ids[i], bytes, hp, nhp, err);
                free(hp);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* One "ID:" prefix of a spec entry: 1 and *ID when present, 0 when the entry has none. */
static int entry_id(const char *s, size_t len, int *id)
{
        const char *colon = memchr(s, ':', len);
        long v = 0;

        if (!colon)
                return 0;
        if (colon == s)
                return -EINVAL;
        for (const char *p = s; p < colon; p++) {
                if (*p < '0' || *p > '9' || v > 100000)
                        return -EINVAL;
                v = v * 10 + (*p - '0');
        }
        *id = (int)v;
        return 1;
}

/* A Kubernetes quantity of LEN bytes as a non-negative integer number of units. */
static int quantity_u64(const char *s, size_t len, uint64_t *ret)
{
        ncm_quantity q;
        if (ncm_quantity_parse_n(s, len, &q, NULL) < 0 || !ncm_quantity_is_integer(&q) ||
            ncm_quantity_sign(&q) < 0 || ncm_quantity_value(&q) == INT64_MAX)
                return -EINVAL;
        *ret = (uint64_t)ncm_quantity_value(&q);
        return 0;
}

#define SPEC_MAX_POOLS 16

static int apply_entry(ncm_topo *t, const char *s, size_t len, ncm_error *err)
{
        ncm_hugepages hp[SPEC_MAX_POOLS];
        size_t nhp = 0, nn;
        uint64_t bytes = 0;
        int id = -1, r = entry_id(s, len, &id);
        const char *p, *end = s + len;
        const int *ids;
        bool first = true;

        if (r < 0)
                return ncm_error_set(err, EINVAL, "\"%.*s\": bad NUMA node id", (int)len, s);
        p = r ? (const char *)memchr(s, ':', len) + 1 : s;
        while (p <= end) {
                const char *comma = memchr(p, ',', (size_t)(end - p));
                const char *item_end = comma ? comma : end;
                size_t ilen = (size_t)(item_end - p);

                if (first) {
                        if (quantity_u64(p, ilen, &bytes) < 0)
                                return ncm_error_set(err, EINVAL,
                                                     "\"%.*s\": expected a memory size, got "
                                                     "\"%.*s\"",
                                                     (int)len, s, (int)ilen, p);
                        first = false;
                } else {
                        const char *eq = memchr(p, '=', ilen);
                        uint64_t page, count;
                        if (ilen < 11 || memcmp(p, "hugepages-", 10) != 0 || !eq ||
                            quantity_u64(p + 10, (size_t)(eq - p - 10), &page) < 0 || page < 1024 ||
                            page % 1024 != 0 ||
                            quantity_u64(eq + 1, (size_t)(item_end - eq - 1), &count) < 0)
                                return ncm_error_set(err, EINVAL,
                                                     "\"%.*s\": expected hugepages-PAGE=COUNT "
                                                     "(a page size of whole KiB), got \"%.*s\"",
                                                     (int)len, s, (int)ilen, p);
                        if (nhp == SPEC_MAX_POOLS)
                                return ncm_error_set(err, EINVAL, "\"%.*s\": more than %d pools",
                                                     (int)len, s, SPEC_MAX_POOLS);
                        hp[nhp].page_size = page / 1024;
                        hp[nhp].num_pages = count;
                        nhp++;
                }
                if (!comma)
                        break;
                p = comma + 1;
        }
        if (id >= 0) {
                r = ncm_topo_set_numa_memory(t, id, bytes, hp, nhp, err);
                return r < 0 ? ncm_error_prefix(err, "\"%.*s\"", (int)len, s) : 0;
        }
        ids = ncm_topo_numa_ids(t, &nn);
        for (size_t i = 0; i < nn; i++) {
                r = ncm_topo_set_numa_memory(t, ids[i], bytes, hp, nhp, err);
                if (r < 0)
                        return ncm_error_prefix(err, "\"%.*s\"", (int)len, s);
        }
        return 0;
}

int ncm_topo_apply_memory_spec(ncm_topo *t, const char *spec, ncm_error *err)
{
        const char *p = spec;

        if (!*spec)
                return ncm_error_set(err, EINVAL, "empty memory specification");
        for (;;) {
                const char *slash = strchr(p, '/');
                size_t len = slash ? (size_t)(slash - p) : strlen(p);
                int r = apply_entry(t, p, len, err);
                if (r < 0)
                        return r;
                if (!slash)
                        return 0;
                p = slash + 1;
        }
}
