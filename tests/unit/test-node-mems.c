/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A container's cpuset.mems, decided once (ncm_node_container_mems) and enforced alike by every
 * path that writes it. One table of machines (1, 2 and 8 NUMA nodes, a node without memory),
 * configurations (memory manager None or Static, cpusetMems inherit or cpus) and pods (exclusive
 * and shared CPUs, hugepages, a memory request no single node holds) is run:
 *  - on a node with no enforcer, asking the function;
 *  - on a node with the cgroupfs enforcer over a fake cgroup v1 tree (the container cgroups'
 *    cpuset.mems files);
 *  - through the OCI hook, each container created by a runtime in a fake cgroup tree (its
 *    cpuset.mems file, and the hook's result);
 *  - through the CRI proxy's decisions (CreateContainer's cpuset_mems, and what reconcile keeps).
 * Each must give the table's answer: the kubelet's "0,1" form, or "" for left alone (the
 * runtime's cpuset.mems stays: the parent's, every node of the machine here).
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nodecm/cri.h>
#include <nodecm/enforcer.h>
#include <nodecm/fs.h>
#include <nodecm/node.h>
#include <nodecm/oci.h>
#include "fakecg.h"
#include "testutil.h"

#define MI (INT64_C(1) << 20)
#define GI (INT64_C(1) << 30)
#define MAX_PODS 4

/* One pod of one container "c"; CPUS 0 makes it Burstable (100m, no limits). */
typedef struct mpod {
        const char *uid;
        int cpus;
        int64_t memory;
        int64_t huge_2mi; /* hugepages-2Mi bytes */
        const char *want; /* its cpuset.mems at the end: the kubelet's form, "" left alone */
} mpod;

typedef struct mcase {
        const char *name;
        const char *synthetic;
        const char *memory;  /* --numa-memory's syntax */
        const char *all;     /* every NUMA node with memory: what a container left alone has */
        const char *kubelet; /* fields beside the common ones */
        mpod pods[MAX_PODS];
} mcase;

/* The memory manager's Static policy with the reservation Node Allocatable wants. */
#define STATIC                                                                                     \
        "\"memoryManagerPolicy\": \"Static\", \"evictionHard\": {\"memory.available\": "           \
        "\"100Mi\"}, \"reservedMemory\": [{\"numaNode\": 0, \"limits\": {\"memory\": \"100Mi\"}}]"

static const mcase cases[] = {
                {"1 NUMA node, no memory manager: left alone, as the kubelet leaves it",
                 "package:1 numa:1 core:4 pu:1",
                 "4Gi",
                 "0",
                 "",
                 {{"s", 0, 0, 0, ""}, {"a", 1, 256 * MI, 0, ""}}},
                {"1 NUMA node, cpusetMems cpus: the NUMA node of the CPUs",
                 "package:1 numa:1 core:4 pu:1",
                 "4Gi",
                 "0",
                 "\"cpusetMems\": \"cpus\"",
                 {{"s", 0, 0, 0, "0"}, {"a", 1, 256 * MI, 0, "0"}}},
                {"1 NUMA node, memory manager Static: the blocks' node; Burstable left alone",
                 "package:1 numa:1 core:4 pu:1",
                 "4Gi",
                 "0",
                 STATIC,
                 {{"s", 0, 0, 0, ""}, {"a", 1, 256 * MI + 4097, 0, "0"}}},
                {"2 NUMA nodes, Static: memory and hugepages blocks on the CPUs' node",
                 "package:1 numa:2 core:2 pu:1",
                 "2Gi,hugepages-2Mi=256",
                 "0-1",
                 STATIC ", \"topologyManagerPolicy\": \"best-effort\"",
                 {{"s", 0, 0, 0, ""}, {"a", 1, 1 * GI, 0, "0"}, {"h", 1, 256 * MI, 256 * MI, "1"}}},
                {"2 NUMA nodes, Static: a cross-NUMA group, though the CPUs are on one node",
                 "package:1 numa:2 core:2 pu:1",
                 "2Gi,hugepages-2Mi=256",
                 "0-1",
                 STATIC ", \"topologyManagerPolicy\": \"best-effort\"",
                 {{"x", 1, 2 * GI, 0, "0,1"}, {"s", 0, 0, 0, ""}}},
                {"2 NUMA nodes, cpusetMems cpus: the shared pool's nodes follow the pool",
                 "package:1 numa:2 core:2 pu:1",
                 "2Gi",
                 "0-1",
                 "\"cpusetMems\": \"cpus\", \"topologyManagerPolicy\": \"single-numa-node\"",
                 {{"s", 0, 0, 0, "0"}, {"a", 1, 256 * MI, 0, "0"}, {"b", 2, 256 * MI, 0, "1"}}},
                {"2 NUMA nodes, Static and cpusetMems cpus: blocks first, the CPUs for the rest",
                 "package:1 numa:2 core:2 pu:1",
                 "2Gi",
                 "0-1",
                 STATIC ", \"cpusetMems\": \"cpus\", \"topologyManagerPolicy\": \"best-effort\"",
                 {{"s", 0, 0, 0, "0,1"}, {"x", 1, 3 * GI, 0, "0,1"}}},
                {"2 NUMA nodes, node 1 without memory, cpusetMems cpus: it is left out",
                 "package:1 numa:2 core:2 pu:1",
                 "0:4Gi",
                 "0",
                 "\"cpusetMems\": \"cpus\"",
                 {{"b", 2, 256 * MI, 0, ""}, {"s", 0, 0, 0, "0"}}},
                /* w: no CPU hint (2 nodes) equals a memory hint (3 nodes), so the merge's best
                 * is the non-preferred [0,1,2] and Allocate widens it to the narrowest memory
                 * hint holding it, [0,1,2,3]: w runs on CPUs 1-2 with memory on nodes 0-3 */
                {"8 NUMA nodes, Static: a 4-node group for 3Gi on 1Gi nodes",
                 "package:2 numa:4 core:1 pu:1",
                 "1Gi",
                 "0-7",
                 STATIC ", \"topologyManagerPolicy\": \"best-effort\"",
                 {{"w", 2, 3 * GI, 0, "0,1,2,3"}, {"v", 1, 512 * MI, 0, "4"}, {"s", 0, 0, 0, ""}}},
};

static char *kubelet_json(const mcase *c)
{
        char *s = NULL;
        /* the v1 trees need failCgroupV1 off; fit admission is not what is tested */
        assert_true(asprintf(&s,
                             "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\", "
                             "\"failCgroupV1\": false, \"fitAdmission\": \"never\"%s%s}",
                             c->kubelet[0] ? ", " : "", c->kubelet) > 0);
        return s;
}

static ncm_node_config *config_of(const mcase *c)
{
        char *k = kubelet_json(c);
        ncm_node_config *cfg = NULL;
        ncm_error err = NCM_ERROR_INIT;

        if (ncm_node_config_parse(k, strlen(k), "kubelet", "", &cfg, &err) < 0)
                fail_msg("%s: %s", c->name, err.msg);
        free(k);
        return cfg;
}

static ncm_topo *topo_of(const mcase *c)
{
        ncm_topo *t = NULL;
        ncm_error err = NCM_ERROR_INIT;

        assert_int_equal(ncm_topo_from_synthetic(c->synthetic, &t, NULL), 0);
        if (ncm_topo_apply_memory_spec(t, c->memory, &err) < 0)
                fail_msg("%s: %s", c->name, err.msg);
        return t;
}

static int n_cpus(const ncm_topo *t)
{
        return ncm_topo_num_cpus(t);
}

static ncm_pod *pod_of(const mpod *p)
{
        char text[1024], huge[64] = "";
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *pod = NULL;

        if (p->huge_2mi)
                snprintf(huge, sizeof(huge), ", hugepages-2Mi: \"%lld\"", (long long)p->huge_2mi);
        if (p->cpus == 0)
                snprintf(text, sizeof(text),
                         "metadata: {name: %s, uid: %s}\nspec:\n  containers:\n  - name: c\n"
                         "    resources: {requests: {cpu: 100m}}\n",
                         p->uid, p->uid);
        else
                snprintf(text, sizeof(text),
                         "metadata: {name: %s, uid: %s}\nspec:\n  containers:\n  - name: c\n"
                         "    resources: {limits: {cpu: \"%d\", memory: \"%lld\"%s}}\n",
                         p->uid, p->uid, p->cpus, (long long)p->memory, huge);
        if (ncm_pod_parse(text, strlen(text), p->uid, &pod, &err) < 0)
                fail_msg("pod %s: %s", p->uid, err.msg);
        return pod;
}

/*
 * A Guaranteed container's memory request is its limit to the byte (the runtimes send only the
 * limit): under the Static policy its "memory" block has exactly P's size.
 */
static void assert_exact_block(const mcase *c, const ncm_node *n, const mpod *p)
{
        const ncm_mem_container *mc =
                        ncm_mem_state_container(ncm_node_memory_state(n), p->uid, "c");
        bool found = false;

        if (!strstr(c->kubelet, "Static") || !p->cpus)
                return;
        for (size_t i = 0; mc && i < mc->n; i++)
                if (strcmp(mc->blocks[i].type, "memory") == 0)
                        found = mc->blocks[i].size == (uint64_t)p->memory;
        if (!found)
                fail_msg("%s: pod %s: no memory block of %lld bytes", c->name, p->uid,
                         (long long)p->memory);
}

/* The container's mems as the node decides them now, in the kubelet's form. */
static char *decided(const ncm_node *n, const char *uid)
{
        ncm_autoptr(ncm_cpuset) cpus = ncm_cpuset_new();
        ncm_buf b = NCM_BUF_INIT;
        ncm_bitmask m;

        assert_non_null(cpus);
        (void)ncm_node_container_cpus(n, uid, "c", cpus);
        if (ncm_node_container_mems(n, uid, "c", cpus, &m) > 0)
                ncm_node_format_mems(m, &b);
        return ncm_buf_steal(&b);
}

/* Whether lists A and B name the same NUMA nodes (any list form). */
static bool same_nodes(const char *a, const char *b)
{
        ncm_autoptr(ncm_cpuset) x = NULL;
        ncm_autoptr(ncm_cpuset) y = NULL;

        return ncm_cpuset_parse_list(a, &x, NULL) >= 0 && ncm_cpuset_parse_list(b, &y, NULL) >= 0 &&
               ncm_cpuset_equal(x, y);
}

static void assert_same_nodes(const char *what, const char *list, const char *want)
{
        if (!same_nodes(list, want))
                fail_msg("%s: cpuset.mems [%s], want [%s]", what, list, want);
}

/* ------------------------------------------------------------------------------------------
 * The function, on a node without an enforcer
 */

static void run_function(const mcase *c)
{
        ncm_autoptr(ncm_topo) t = topo_of(c);
        ncm_autoptr(ncm_node_config) cfg = config_of(c);
        ncm_autoptr(ncm_node) n = NULL;
        ncm_error err = NCM_ERROR_INIT;

        if (ncm_node_new(t, cfg, NULL, &n, &err) < 0)
                fail_msg("%s: %s", c->name, err.msg);
        for (size_t i = 0; i < MAX_PODS && c->pods[i].uid; i++) {
                ncm_autoptr(ncm_pod) pod = pod_of(&c->pods[i]);
                ncm_node_admission *a = NULL;
                if (ncm_node_admit(n, pod, 0, &a, &err) < 0 || !a->admitted)
                        fail_msg("%s: admit %s: %s %s", c->name, c->pods[i].uid, err.msg,
                                 a ? a->message : "");
                ncm_node_admission_free(a);
        }
        /* the same after a restart: the blocks come back from memory_manager_state */
        for (int restarted = 0; restarted < 2; restarted++) {
                if (restarted && ncm_node_restart(n, NULL, &err) < 0)
                        fail_msg("%s: restart: %s", c->name, err.msg);
                for (size_t i = 0; i < MAX_PODS && c->pods[i].uid; i++) {
                        char *got = decided(n, c->pods[i].uid);
                        if (strcmp(got, c->pods[i].want) != 0)
                                fail_msg("%s: pod %s%s: mems \"%s\", want \"%s\"", c->name,
                                         c->pods[i].uid, restarted ? " (restarted)" : "", got,
                                         c->pods[i].want);
                        free(got);
                }
        }
}

static void test_node_mems_function(void **state)
{
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++)
                run_function(&cases[i]);
}

/* ------------------------------------------------------------------------------------------
 * The cgroupfs enforcer on a fake cgroup v1 tree
 */

static void run_cgroupfs(const mcase *c)
{
        ncm_autoptr(ncm_topo) t = topo_of(c);
        ncm_autoptr(ncm_node_config) cfg = config_of(c);
        ncm_autoptr(ncm_enforcer) e = NULL;
        ncm_autoptr(ncm_node) n = NULL;
        ncm_enforcer_cgroup_options o = {0};
        ncm_node_options no = {0};
        ncm_resource_list capacity = {0};
        ncm_error err = NCM_ERROR_INIT;
        char all_cpus[32];
        fake fk;
        ncm_quantity q;

        fake_init(&fk, 1, false);
        /* the machine's root cpuset: every CPU, every node with memory */
        snprintf(all_cpus, sizeof(all_cpus), "0-%d\n", n_cpus(t) - 1);
        fake_put(fk.rootfd, "/cpuset", "cpuset.cpus", all_cpus);
        fake_put(fk.rootfd, "/cpuset", "cpuset.mems", c->all);
        assert_int_equal(ncm_quantity_parse("64", &q, NULL), 0);
        assert_int_equal(ncm_cgroup_resource_list_set(&capacity, "cpu", &q), 0);
        assert_int_equal(ncm_quantity_parse("64Gi", &q, NULL), 0);
        assert_int_equal(ncm_cgroup_resource_list_set(&capacity, "memory", &q), 0);
        o.mount_root = fk.dir;
        o.cgroup_version = 1;
        o.capacity = &capacity;
        o.exec = &fk.exec;
        assert_int_equal(ncm_enforcer_cgroupfs_new(&o, &e, NULL), 0);
        no.enforcer = e;
        if (ncm_node_new(t, cfg, &no, &n, &err) < 0)
                fail_msg("%s: %s", c->name, err.msg);
        for (size_t i = 0; i < MAX_PODS && c->pods[i].uid; i++) {
                ncm_autoptr(ncm_pod) pod = pod_of(&c->pods[i]);
                ncm_node_admission *a = NULL;
                if (ncm_node_admit(n, pod, 0, &a, &err) < 0 || !a->admitted)
                        fail_msg("%s: admit %s: %s", c->name, c->pods[i].uid, err.msg);
                ncm_node_admission_free(a);
        }
        for (size_t i = 0; i < MAX_PODS && c->pods[i].uid; i++) {
                const mpod *p = &c->pods[i];
                char path[512], what[512];
                char *got;
                snprintf(path, sizeof(path), "/cpuset/kubepods/%spod%s/c/cpuset.mems",
                         p->cpus ? "" : "burstable/", p->uid);
                got = fake_get(fk.rootfd, path);
                snprintf(what, sizeof(what), "%s: cgroupfs: pod %s", c->name, p->uid);
                assert_same_nodes(what, got, p->want[0] ? p->want : c->all);
                free(got);
                if (!p->want[0] || same_nodes(p->want, c->all))
                        continue;
                /* someone widened it: reconcile writes the node's mems again */
                *strrchr(path, '/') = '\0';
                fake_put(fk.rootfd, path, "cpuset.mems", c->all);
                if (ncm_node_reconcile(n, &err) < 1)
                        fail_msg("%s: reconcile did not write pod %s: %s", c->name, p->uid,
                                 err.msg);
                strcat(path, "/cpuset.mems");
                got = fake_get(fk.rootfd, path);
                assert_same_nodes(what, got, p->want);
                free(got);
        }
        n = ncm_node_free(n);
        e = ncm_enforcer_free(e);
        ncm_resource_list_done(&capacity);
        fake_done(&fk);
}

static void test_node_mems_cgroupfs(void **state)
{
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++)
                run_cgroupfs(&cases[i]);
}

/* ------------------------------------------------------------------------------------------
 * The OCI hook: containers a runtime made in a fake cgroup v1 tree
 */

typedef struct oci_fx {
        char *tmp;
        char cg[512], proc[512];
        int pid;
} oci_fx;

static void mkdir_in(const char *dir, const char *name)
{
        char *p = NULL;
        assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
        assert_int_equal(mkdir(p, 0755), 0);
        free(p);
}

static void put_file(const char *dir, const char *name, const char *text)
{
        char *p = NULL;
        assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
        tu_write_file(p, text);
        free(p);
}

/* The cgroup the runtime made for container ID, as the runtime leaves it: the parent's. */
static void runtime_cgroup(oci_fx *f, const char *id, const char *cpus, const char *mems)
{
        char p[1024];
        snprintf(p, sizeof(p), "%s/cpuset/ctrs/%s", f->cg, id);
        assert_int_equal(mkdir(p, 0755), 0);
        put_file(p, "cpuset.cpus", cpus);
        put_file(p, "cpuset.mems", mems);
}

static void oci_create(oci_fx *f, ncm_oci_hook_options *o, const mcase *c, const mpod *p,
                       const char *cpus)
{
        char dir[1024], state[2048], config[2048], res[512], huge[128] = "";
        ncm_oci_hook_result r = {0};
        ncm_error err = NCM_ERROR_INIT;
        int pid = f->pid++;

        runtime_cgroup(f, p->uid, cpus, c->all);
        snprintf(dir, sizeof(dir), "%s/proc/%d", f->proc, pid);
        assert_int_equal(mkdir(dir, 0755), 0);
        snprintf(state, sizeof(state), "3:cpuset:/ctrs/%s\n", p->uid);
        put_file(dir, "cgroup", state);
        if (p->huge_2mi)
                snprintf(huge, sizeof(huge),
                         ", \"hugepageLimits\": [{\"pageSize\": \"2MB\", \"limit\": %lld}]",
                         (long long)p->huge_2mi);
        if (p->cpus)
                snprintf(res, sizeof(res),
                         "{\"cpu\": {\"shares\": %d, \"quota\": %d, \"period\": 100000}, "
                         "\"memory\": {\"limit\": %lld}%s}",
                         p->cpus * 1024, p->cpus * 100000, (long long)p->memory, huge);
        else
                snprintf(res, sizeof(res), "{\"cpu\": {\"shares\": 102}}");
        snprintf(state, sizeof(state),
                 "{\"ociVersion\": \"1.0.2\", \"id\": \"%s\", \"status\": \"creating\", \"pid\": "
                 "%d, \"bundle\": \"/nonexistent\", \"annotations\": {}}",
                 p->uid, pid);
        snprintf(config, sizeof(config),
                 "{\"ociVersion\": \"1.0.2\", \"annotations\": {\"nodecm.io/pod-uid\": \"%s\", "
                 "\"nodecm.io/container-name\": \"c\", \"nodecm.io/qos-class\": \"%s\"}, "
                 "\"linux\": {\"cgroupsPath\": \"/ctrs/%s\", \"resources\": %s}}",
                 p->uid, p->cpus ? "Guaranteed" : "Burstable", p->uid, res);
        o->config_text = config;
        o->config_len = strlen(config);
        if (ncm_oci_hook_run(o, state, strlen(state), &r, &err) < 0)
                fail_msg("%s: hook %s: %s", c->name, p->uid, err.msg);
        assert_int_equal(r.action, NCM_OCI_ADMITTED);
        ncm_oci_hook_result_done(&r);
}

static void run_oci(const mcase *c)
{
        ncm_autoptr(ncm_topo) t = topo_of(c);
        ncm_autoptr(ncm_node_config) cfg = config_of(c);
        ncm_oci_hook_options o = {0};
        oci_fx f = {.pid = 100};
        char p[1024], all_cpus[32];

        f.tmp = tu_mkdtemp();
        snprintf(f.cg, sizeof(f.cg), "%s/cgroup", f.tmp);
        snprintf(f.proc, sizeof(f.proc), "%s/root", f.tmp);
        snprintf(all_cpus, sizeof(all_cpus), "0-%d", n_cpus(t) - 1);
        mkdir_in(f.tmp, "cgroup");
        mkdir_in(f.cg, "cpuset");
        snprintf(p, sizeof(p), "%s/cpuset", f.cg);
        mkdir_in(p, "ctrs");
        mkdir_in(f.tmp, "root");
        mkdir_in(f.proc, "proc");
        snprintf(p, sizeof(p), "%s/node", f.tmp);
        o.root_dir = p;
        o.topo = t;
        o.cfg = cfg;
        o.cgroup_root = f.cg;
        o.cgroup_version = 1;
        o.proc_root = f.proc;
        for (size_t i = 0; i < MAX_PODS && c->pods[i].uid; i++)
                oci_create(&f, &o, c, &c->pods[i], all_cpus);
        {
                /* the node the hooks kept, read back */
                ncm_node_dir_options dopt = {0};
                ncm_autoptr(ncm_enforcer) none = NULL;
                ncm_node_dir *nd = NULL;
                ncm_error err = NCM_ERROR_INIT;
                assert_int_equal(ncm_enforcer_none_new(&none, NULL), 0);
                dopt.enforcer = none;
                if (ncm_node_dir_open(p, t, cfg, &dopt, &nd, &err) < 0)
                        fail_msg("%s: %s", c->name, err.msg);
                for (size_t i = 0; i < MAX_PODS && c->pods[i].uid; i++)
                        assert_exact_block(c, ncm_node_dir_node(nd), &c->pods[i]);
                ncm_node_dir_close(nd);
        }
        for (size_t i = 0; i < MAX_PODS && c->pods[i].uid; i++) {
                const mpod *pd = &c->pods[i];
                char path[1024], what[512];
                char *got;
                snprintf(path, sizeof(path), "%s/cpuset/ctrs/%s", f.cg, pd->uid);
                got = tu_file_text(path, "cpuset.mems");
                snprintf(what, sizeof(what), "%s: oci hook: pod %s", c->name, pd->uid);
                if (pd->want[0] && strcmp(got, pd->want) != 0)
                        fail_msg("%s: cpuset.mems [%s], want [%s]", what, got, pd->want);
                assert_same_nodes(what, got, pd->want[0] ? pd->want : c->all);
                free(got);
        }
        tu_rm_rf(f.tmp);
        free(f.tmp);
}

static void test_node_mems_oci_hook(void **state)
{
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++)
                run_oci(&cases[i]);
}

/* ------------------------------------------------------------------------------------------
 * The CRI proxy's decisions
 */

static void run_cri(const mcase *c)
{
        ncm_autoptr(ncm_topo) t = topo_of(c);
        ncm_autoptr(ncm_node_config) cfg = config_of(c);
        ncm_autoptr(ncm_enforcer) e = NULL;
        ncm_node_dir_options dopt = {.flags = NCM_NODE_DIR_INIT};
        ncm_node_dir *nd = NULL;
        ncm_cri_node *cn = NULL;
        ncm_ctl_target tg = {0};
        ncm_error err = NCM_ERROR_INIT;
        char *dir = tu_mkdtemp();

        assert_int_equal(ncm_enforcer_none_new(&e, NULL), 0);
        dopt.enforcer = e;
        if (ncm_node_dir_open(dir, t, cfg, &dopt, &nd, &err) < 0)
                fail_msg("%s: %s", c->name, err.msg);
        tg.node = ncm_node_dir_node(nd);
        tg.dir = dir;
        tg.enforcer = "none";
        if (ncm_cri_node_open(dir, &tg, &cn, &err) < 0)
                fail_msg("%s: %s", c->name, err.msg);
        for (size_t i = 0; i < MAX_PODS && c->pods[i].uid; i++) {
                const mpod *p = &c->pods[i];
                ncm_cri_container_config q = {0};
                ncm_cri_decision d;
                ncm_ctl_result res = NCM_CTL_RESULT_INIT;
                char parent[256];
                char *now;
                snprintf(parent, sizeof(parent), "/kubepods/%spod%s", p->cpus ? "" : "burstable/",
                         p->uid);
                q.pod_sandbox_id = (char *)p->uid;
                q.name = (char *)"c";
                q.resources.present = true;
                q.resources.r.cpu_shares = p->cpus ? p->cpus * 1024 : 102;
                q.resources.r.cpu_quota = p->cpus ? p->cpus * 100000 : 0;
                q.resources.r.cpu_period = 100000;
                q.resources.r.memory_limit = p->memory;
                if (p->huge_2mi) {
                        q.resources.r.n_hugepages = 1;
                        q.resources.r.hugepages[0].page_size = 2 * MI;
                        q.resources.r.hugepages[0].limit = p->huge_2mi;
                }
                q.has_sandbox = true;
                q.sandbox.uid = (char *)p->uid;
                q.sandbox.name = (char *)p->uid;
                q.sandbox.namespace = (char *)"default";
                q.sandbox.cgroup_parent = parent;
                if (ncm_cri_node_create(cn, &q, &d, &err) < 0 || d.action != NCM_CRI_ADMIT)
                        fail_msg("%s: CreateContainer %s: %s %s", c->name, p->uid, err.msg,
                                 d.message);
                /* what CreateContainer carries is the node's answer at that moment */
                now = decided(tg.node, p->uid);
                if (strcmp(d.cpuset_mems ? d.cpuset_mems : "", now) != 0)
                        fail_msg("%s: CreateContainer %s: cpuset_mems \"%s\", the node's \"%s\"",
                                 c->name, p->uid, d.cpuset_mems ? d.cpuset_mems : "", now);
                free(now);
                assert_exact_block(c, tg.node, p);
                assert_int_equal(ncm_cri_node_created(cn, p->uid, "c", p->uid, &res, &err), 0);
                assert_int_equal(ncm_cri_node_sync(cn, &err), 0);
                ncm_ctl_result_done(&res);
                ncm_cri_decision_done(&d);
        }
        /* what reconcile keeps each container at */
        for (size_t i = 0; i < MAX_PODS && c->pods[i].uid; i++) {
                const mpod *p = &c->pods[i];
                char *cpus = NULL, *mems = NULL;
                assert_int_equal(ncm_cri_node_cpusets(cn, p->uid, &cpus, &mems), 1);
                if (strcmp(mems ? mems : "", p->want) != 0)
                        fail_msg("%s: cri: pod %s: cpuset_mems \"%s\", want \"%s\"", c->name,
                                 p->uid, mems ? mems : "", p->want);
                free(cpus);
                free(mems);
        }
        ncm_cri_node_free(cn);
        ncm_node_dir_close(nd);
        tu_rm_rf(dir);
        free(dir);
}

static void test_node_mems_cri(void **state)
{
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(cases); i++)
                run_cri(&cases[i]);
}

/* ------------------------------------------------------------------------------------------ */

static void test_node_mems_format(void **state)
{
        ncm_buf b = NCM_BUF_INIT;
        (void)state;
        ncm_node_format_mems(UINT64_C(1) << 0 | UINT64_C(1) << 1 | UINT64_C(1) << 3 |
                                             UINT64_C(1) << 63,
                             &b);
        assert_string_equal(b.data, "0,1,3,63");
        ncm_buf_done(&b);
}

static void test_node_mems_config(void **state)
{
        static const char *const bad[] = {"{\"cpusetMems\": \"numa\"}", "{\"cpusetMems\": 1}"};
        static const char *const why[] = {"cpusetMems: unknown cpusetMems \"numa\" (inherit or "
                                          "cpus)",
                                          "cpusetMems: expected string, got number"};
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(bad); i++) {
                ncm_node_config *cfg = NULL;
                ncm_error err = NCM_ERROR_INIT;
                assert_int_equal(ncm_node_config_parse(bad[i], strlen(bad[i]), "k", "", &cfg, &err),
                                 -EINVAL);
                assert_string_equal(err.msg, why[i]);
        }
        {
                const char *k = "{\"cpusetMems\": \"inherit\"}";
                ncm_autoptr(ncm_node_config) cfg = NULL;
                assert_int_equal(ncm_node_config_parse(k, strlen(k), "k", "", &cfg, NULL), 0);
                assert_int_equal(ncm_node_config_cpuset_mems(cfg), NCM_NODE_MEMS_INHERIT);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_node_mems_format),
                        cmocka_unit_test(test_node_mems_config),
                        cmocka_unit_test(test_node_mems_function),
                        cmocka_unit_test(test_node_mems_cgroupfs),
                        cmocka_unit_test(test_node_mems_oci_hook),
                        cmocka_unit_test(test_node_mems_cri),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
