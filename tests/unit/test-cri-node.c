/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/cri's node side: the decisions nodecmd's CRI proxy and reconcile make, on a node kept in a
 * temporary directory (no daemon, no runtime): pods admitted as their containers come, with the
 * kubelet's values and the QoS class of their cgroup parent; refusals with the kubelet's text
 * and nothing changed; releases; the record persisted; reconcile's stale containers and the
 * adoption, at start-up, of creations a killed process left in flight. The proxy itself is
 * tested against a real containerd (tests/integration/test-cri-proxy.py).
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <nodecm/cri.h>
#include <nodecm/fs.h>
#include "testutil.h"

typedef struct fx {
        char *dir;
        ncm_topo *topo;
        ncm_node_config *cfg;
        ncm_enforcer *enf;
        ncm_node_dir *nd;
        ncm_ctl_target t;
        ncm_cri_node *cn;
} fx;

static void open_cn(fx *f)
{
        ncm_node_dir_options o = {.flags = NCM_NODE_DIR_INIT, .enforcer = f->enf};
        ncm_error err = NCM_ERROR_INIT;

        if (ncm_node_dir_open(f->dir, f->topo, f->cfg, &o, &f->nd, &err) < 0)
                fail_msg("%s", err.msg);
        f->t.node = ncm_node_dir_node(f->nd);
        f->t.dir = f->dir;
        f->t.enforcer = "none";
        if (ncm_cri_node_open(f->dir, &f->t, &f->cn, &err) < 0)
                fail_msg("%s", err.msg);
}

/* A process that ends: the node and the record are read again by the next. */
static void reopen(fx *f)
{
        f->cn = ncm_cri_node_free(f->cn);
        f->nd = ncm_node_dir_close(f->nd);
        open_cn(f);
}

static int setup(void **state)
{
        fx *f = calloc(1, sizeof(*f));
        const char *k = "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\"}";

        f->dir = tu_mkdtemp();
        assert_int_equal(ncm_topo_from_synthetic("package:1 core:4 pu:1", &f->topo, NULL), 0);
        assert_int_equal(ncm_node_config_parse(k, strlen(k), NULL, "", &f->cfg, NULL), 0);
        assert_int_equal(ncm_enforcer_none_new(&f->enf, NULL), 0);
        open_cn(f);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        fx *f = *state;
        ncm_cri_node_free(f->cn);
        ncm_node_dir_close(f->nd);
        ncm_enforcer_free(f->enf);
        ncm_node_config_free(f->cfg);
        ncm_topo_free(f->topo);
        tu_rm_rf(f->dir);
        free(f->dir);
        free(f);
        return 0;
}

/* What the kubelet sends for container NAME of pod UID in sandbox SB (cgroup parent PARENT). */
static ncm_cri_container_config request(const char *sb, const char *uid, const char *parent,
                                        const char *name, int64_t req_m, int64_t lim_m, int64_t mem)
{
        ncm_cri_container_config c = {0};
        c.pod_sandbox_id = (char *)sb;
        c.name = (char *)name;
        c.resources.present = true;
        c.resources.r.cpu_shares = req_m ? req_m * 1024 / 1000 : 2;
        c.resources.r.cpu_quota = lim_m * 100;
        c.resources.r.cpu_period = 100000;
        c.resources.r.memory_limit = mem;
        c.has_sandbox = true;
        c.sandbox.uid = (char *)uid;
        c.sandbox.name = (char *)uid;
        c.sandbox.namespace = (char *)"default";
        c.sandbox.cgroup_parent = (char *)parent;
        return c;
}

static void create(fx *f, const ncm_cri_container_config *c, ncm_cri_action want, const char *cpus,
                   const char *id)
{
        ncm_cri_decision d;
        ncm_error err = NCM_ERROR_INIT;
        ncm_ctl_result res = NCM_CTL_RESULT_INIT;

        if (ncm_cri_node_create(f->cn, c, &d, &err) < 0)
                fail_msg("create %s: %s", c->name, err.msg);
        assert_int_equal(d.action, want);
        if (want == NCM_CRI_ADMIT) {
                assert_string_equal(d.cpuset_cpus, cpus);
                /* no memory manager: cpuset_mems left to the runtime, as the kubelet leaves it */
                assert_null(d.cpuset_mems);
                assert_true(d.ctl.admission && d.ctl.admitted);
                if (id)
                        assert_int_equal(ncm_cri_node_created(f->cn, c->sandbox.uid, c->name, id,
                                                              &res, &err),
                                         0);
                /* as nodecmd does once the runtime has answered */
                assert_int_equal(ncm_cri_node_sync(f->cn, &err), 0);
        }
        ncm_ctl_result_done(&res);
        ncm_cri_decision_done(&d);
}

static void assert_cpusets(fx *f, const char *id, const char *want)
{
        char *cpus = NULL, *mems = NULL;
        int r = ncm_cri_node_cpusets(f->cn, id, &cpus, &mems);
        if (!want) {
                assert_int_equal(r, 0);
                return;
        }
        assert_int_equal(r, 1);
        if (strcmp(cpus, want) != 0)
                fail_msg("%s: %s, want %s", id, cpus, want);
        free(cpus);
        free(mems);
}

/* The record as the next process (or a look at the disk) finds it: the file and its journal. */
static char *record_text(fx *f)
{
        char path[4096], *text = NULL, *journal = NULL, *both = NULL;

        snprintf(path, sizeof(path), "%s/%s", f->dir, NCM_CRI_CONTAINERS_NAME);
        if (ncm_fs_read_all(AT_FDCWD, path, 1 << 20, &text, NULL, NULL) < 0)
                text = strdup("");
        snprintf(path, sizeof(path), "%s/%s", f->dir, NCM_CRI_JOURNAL_NAME);
        if (ncm_fs_read_all(AT_FDCWD, path, 1 << 20, &journal, NULL, NULL) < 0)
                journal = strdup("");
        assert_true(asprintf(&both, "%s%s", text, journal) >= 0);
        free(text);
        free(journal);
        return both;
}

/*
 * What is written when (docs/runtimes.md, "Cost"): a sandbox only with the admission of its
 * first container, which writes the record and the node's files as one batch and leaves the
 * directory's fsync to the caller (ncm_cri_node_sync, once the request is on its way); the
 * runtime's id after the creation. A process that ends in between loses nothing it needs.
 */
/* The entries of DIR (TEMPORARIES: only the temporary files of atomic writes). */
static int count_entries(const char *dir, bool temporaries)
{
        DIR *d = opendir(dir);
        struct dirent *e;
        int n = 0;

        assert_non_null(d);
        while ((e = readdir(d))) {
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                        continue;
                n += !temporaries || (e->d_name[0] == '.' && strstr(e->d_name, ".tmp"));
        }
        closedir(d);
        return n;
}

static int count_files(const char *dir)
{
        return count_entries(dir, false);
}

static int count_temporaries(const char *dir)
{
        return count_entries(dir, true);
}

/* The temporary files of DIR that hold something (a write in flight, or one not rolled back). */
static int count_nonempty_temporaries(const char *dir)
{
        DIR *d = opendir(dir);
        struct dirent *e;
        int n = 0;

        assert_non_null(d);
        while ((e = readdir(d))) {
                struct stat st;
                if (e->d_name[0] != '.' || !strstr(e->d_name, ".tmp"))
                        continue;
                assert_int_equal(fstatat(dirfd(d), e->d_name, &st, 0), 0);
                n += st.st_size > 0;
        }
        closedir(d);
        return n;
}

/* The inode of DIR/NAME: a new one for every atomic write. */
static ino_t inode_of(const char *dir, const char *name)
{
        char path[4096];
        struct stat st;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        assert_int_equal(stat(path, &st), 0);
        return st.st_ino;
}

/*
 * DRA's devices through the CRI (draTopologyHints: align): the CDI devices CreateContainer
 * carries are located on the machine the node reads (issue 24's fake machine) and align the
 * container's CPUs with them; the same request without aligns with nothing.
 */
static void test_cri_node_dra_devices(void **state)
{
        const char *k = "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0,16\", "
                        "\"topologyManagerPolicy\": \"single-numa-node\", "
                        "\"draTopologyHints\": \"align\"}";
        char *tmp = NULL, *root = tu_extract_topology("fakepci-2s4r", &tmp);
        char *dir = tu_mkdtemp();
        ncm_topo *topo = NULL;
        ncm_node_config *cfg = NULL;
        ncm_enforcer *enf = NULL;
        ncm_node_dir *nd = NULL;
        ncm_cri_node *cn = NULL;
        ncm_ctl_target t = {0};
        ncm_node_dir_options o = {.flags = NCM_NODE_DIR_INIT};
        ncm_error err = NCM_ERROR_INIT;
        char *cdi[] = {(char *)"example.com/gpu=gpu1", (char *)"not a name"};
        ncm_cri_container_config c =
                        request("sb1", "u1", "/kubepods/podu1", "app", 2000, 2000, 1 << 30);
        ncm_cri_container_config plain =
                        request("sb2", "u2", "/kubepods/podu2", "app", 2000, 2000, 1 << 30);
        ncm_cri_decision d;
        (void)state;

        assert_int_equal(ncm_topo_load(NCM_TOPO_SOURCE_FSROOT, root, &topo, &err), 0);
        assert_int_equal(ncm_node_config_parse(k, strlen(k), NULL, "", &cfg, &err), 0);
        assert_int_equal(ncm_enforcer_none_new(&enf, NULL), 0);
        o.enforcer = enf;
        o.machine_root = root;
        if (ncm_node_dir_open(dir, topo, cfg, &o, &nd, &err) < 0)
                fail_msg("%s", err.msg);
        t.node = ncm_node_dir_node(nd);
        t.dir = dir;
        t.enforcer = "none";
        assert_int_equal(ncm_cri_node_open(dir, &t, &cn, &err), 0);

        /* a name CDI would refuse is left to the runtime; the GPU's node 1 holds the CPUs */
        c.cdi_devices = cdi;
        c.n_cdi_devices = 2;
        if (ncm_cri_node_create(cn, &c, &d, &err) < 0)
                fail_msg("%s", err.msg);
        assert_int_equal(d.action, NCM_CRI_ADMIT);
        assert_string_equal(d.cpuset_cpus, "8,24");
        ncm_cri_decision_done(&d);
        /* without devices, the kubelet's choice: node 0 */
        assert_int_equal(ncm_cri_node_create(cn, &plain, &d, &err), 0);
        assert_int_equal(d.action, NCM_CRI_ADMIT);
        assert_string_equal(d.cpuset_cpus, "1,17");
        ncm_cri_decision_done(&d);

        ncm_cri_node_free(cn);
        ncm_node_dir_close(nd);
        ncm_enforcer_free(enf);
        ncm_node_config_free(cfg);
        ncm_topo_free(topo);
        tu_rm_rf(dir);
        free(dir);
        tu_rm_rf(tmp);
        free(tmp);
        free(root);
}

/*
 * An UpdateContainerResources that resizes a container with DRA devices: the record does not
 * keep its CDI devices, so the pod the proxy rebuilds names none; the node's resize keeps the
 * ones it was admitted with (their hints and the CPUs near them count again, and the held pod
 * still names them afterwards).
 */
static void test_cri_node_dra_resize(void **state)
{
        const char *k = "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0,16\", "
                        "\"topologyManagerPolicy\": \"single-numa-node\", "
                        "\"draTopologyHints\": \"align\", \"deviceLocalCPUs\": \"prefer\", "
                        "\"featureGates\": {\"InPlacePodVerticalScalingExclusiveCPUs\": true}}";
        char *tmp = NULL, *root = tu_extract_topology("fakepci-2s4r", &tmp);
        char *dir = tu_mkdtemp();
        ncm_topo *topo = NULL;
        ncm_node_config *cfg = NULL;
        ncm_enforcer *enf = NULL;
        ncm_node_dir *nd = NULL;
        ncm_cri_node *cn = NULL;
        ncm_ctl_target t = {0};
        ncm_node_dir_options o = {.flags = NCM_NODE_DIR_INIT};
        ncm_error err = NCM_ERROR_INIT;
        ncm_ctl_result res = NCM_CTL_RESULT_INIT;
        char *cdi[] = {(char *)"example.com/gpu=gpu1"};
        ncm_cri_container_config c =
                        request("sb1", "u1", "/kubepods/podu1", "app", 2000, 2000, 1 << 30);
        ncm_cri_container_config up =
                        request("sb1", "u1", "/kubepods/podu1", "app", 4000, 4000, 1 << 30);
        const ncm_pod *held;
        ncm_cri_decision d;
        (void)state;

        assert_int_equal(ncm_topo_load(NCM_TOPO_SOURCE_FSROOT, root, &topo, &err), 0);
        assert_int_equal(ncm_node_config_parse(k, strlen(k), NULL, "", &cfg, &err), 0);
        assert_int_equal(ncm_enforcer_none_new(&enf, NULL), 0);
        o.enforcer = enf;
        o.machine_root = root;
        if (ncm_node_dir_open(dir, topo, cfg, &o, &nd, &err) < 0)
                fail_msg("%s", err.msg);
        t.node = ncm_node_dir_node(nd);
        t.dir = dir;
        t.enforcer = "none";
        assert_int_equal(ncm_cri_node_open(dir, &t, &cn, &err), 0);

        c.cdi_devices = cdi;
        c.n_cdi_devices = 1;
        if (ncm_cri_node_create(cn, &c, &d, &err) < 0)
                fail_msg("%s", err.msg);
        assert_int_equal(d.action, NCM_CRI_ADMIT);
        assert_string_equal(d.cpuset_cpus, "8,24");
        ncm_cri_decision_done(&d);
        assert_int_equal(ncm_cri_node_created(cn, "u1", "app", "c1", &res, NULL), 0);
        ncm_ctl_result_done(&res);

        /* 2 -> 4 CPUs: grown on the GPU's L3, the GPU still the container's */
        if (ncm_cri_node_update(cn, "c1", &up.resources, &d, &err) < 0)
                fail_msg("%s", err.msg);
        assert_int_equal(d.action, NCM_CRI_ADMIT);
        assert_string_equal(d.cpuset_cpus, "8-9,24-25");
        ncm_cri_decision_done(&d);
        held = ncm_node_pod(t.node, "u1");
        assert_non_null(held);
        assert_int_equal(held->containers[0].n_cdi_devices, 1);
        assert_string_equal(held->containers[0].cdi_devices[0], "example.com/gpu=gpu1");

        ncm_cri_node_free(cn);
        ncm_node_dir_close(nd);
        ncm_enforcer_free(enf);
        ncm_node_config_free(cfg);
        ncm_topo_free(topo);
        tu_rm_rf(dir);
        free(dir);
        tu_rm_rf(tmp);
        free(tmp);
        free(root);
}

static void test_cri_node_writes(void **state)
{
        fx *f = *state;
        ncm_cri_sandbox_config sbc = {.uid = (char *)"ug"};
        ncm_cri_container_config g =
                        request("sg", "ug", "/kubepods/podug", "app", 1000, 1000, 1 << 28);
        ncm_ctl_result res = NCM_CTL_RESULT_INIT;
        ncm_cri_decision d;
        uint64_t syncs;
        char *text;

        assert_int_equal(ncm_cri_node_sandbox(f->cn, "sg", &sbc, NULL), 0);
        text = record_text(f);
        assert_null(strstr(text, "\"sg\""));
        free(text);
        /* the sandbox forgotten: its CreateContainer carries its config again */
        reopen(f);
        syncs = ncm_node_dir_syncs(f->t.node);
        assert_int_equal(ncm_cri_node_create(f->cn, &g, &d, NULL), 0);
        assert_int_equal(d.action, NCM_CRI_ADMIT);
        assert_string_equal(d.cpuset_cpus, "1");
        ncm_cri_decision_done(&d);
        /* every file in place, the directory's fsync owed to the caller */
        assert_int_equal(ncm_node_dir_syncs(f->t.node), syncs);
        assert_int_equal(count_temporaries(f->dir), 0);
        assert_int_equal(ncm_cri_node_sync(f->cn, NULL), 0);
        text = record_text(f);
        assert_non_null(strstr(text, "\"sg\""));
        assert_non_null(strstr(text, "\"app\""));
        assert_null(strstr(text, "\"c-app\""));
        free(text);
        assert_int_equal(ncm_cri_node_created(f->cn, "ug", "app", "c-app", &res, NULL), 0);
        ncm_ctl_result_done(&res);
        text = record_text(f);
        assert_non_null(strstr(text, "\"c-app\""));
        free(text);
        reopen(f);
        assert_int_equal(ncm_cri_node_num_containers(f->cn), 1);
        assert_cpusets(f, "c-app", "1");
        /* the runtime's id lost with the machine: the record without it, an orphan the runtime's
         * list settles (test_cri_node_reconcile) */
}

static void test_cri_node_admits_as_containers_come(void **state)
{
        fx *f = *state;
        ncm_cri_container_config g =
                        request("sg", "ug", "/kubepods/podug", "app", 2000, 2000, 1 << 28);
        ncm_cri_container_config b =
                        request("sb", "ub", "/kubepods/burstable/podub", "web", 250, 0, 0);
        ncm_cri_container_config g2 =
                        request("sg", "ug", "/kubepods/podug", "log", 500, 500, 1 << 26);
        ncm_cri_sandbox_config sbc = {.uid = (char *)"ug"};

        assert_int_equal(ncm_cri_node_sandbox(f->cn, "sg", &sbc, NULL), 0);
        create(f, &b, NCM_CRI_ADMIT, "0-3", "cb");
        create(f, &g, NCM_CRI_ADMIT, "1-2", "cg");
        /* a second container of the Guaranteed pod, fractional: the pool */
        create(f, &g2, NCM_CRI_ADMIT, "0,3", "cg2");
        assert_cpusets(f, "cb", "0,3");
        assert_cpusets(f, "cg", "1-2");
        assert_cpusets(f, "unknown", NULL);
        /* the record survives the process */
        reopen(f);
        assert_cpusets(f, "cg", "1-2");
        assert_int_equal(ncm_cri_node_num_containers(f->cn), 3);
        {
                ncm_ctl_result res = NCM_CTL_RESULT_INIT;
                assert_int_equal(ncm_cri_node_container_removed(f->cn, "cg", &res, NULL), 0);
                assert_true(res.pool_changed);
                ncm_ctl_result_done(&res);
        }
        assert_cpusets(f, "cb", "0-3");
        {
                ncm_ctl_result res = NCM_CTL_RESULT_INIT;
                assert_int_equal(ncm_cri_node_sandbox_removed(f->cn, "sg", &res, NULL), 0);
                ncm_ctl_result_done(&res);
        }
        assert_null(ncm_node_pod(f->t.node, "ug"));
        assert_int_equal(ncm_cri_node_num_containers(f->cn), 1);
        /* unknown ids change nothing */
        {
                ncm_ctl_result res = NCM_CTL_RESULT_INIT;
                assert_int_equal(ncm_cri_node_container_removed(f->cn, "nope", &res, NULL), 0);
                assert_int_equal(ncm_cri_node_sandbox_removed(f->cn, "nope", &res, NULL), 0);
                ncm_ctl_result_done(&res);
        }
}

/* The intents the cri enforcer published since the last take, as "pod/name=cpus@mems ...". */
static char *taken(fx *f)
{
        ncm_cri_intent *v = NULL;
        size_t n = 0;
        ncm_buf b = NCM_BUF_INIT;

        assert_int_equal(ncm_enforcer_cri_take(f->enf, &v, &n), 0);
        for (size_t i = 0; i < n; i++)
                ncm_buf_printf(&b, "%s%s/%s=%s@%s", i ? " " : "", v[i].pod_uid, v[i].container,
                               v[i].cpuset_cpus, v[i].cpuset_mems);
        ncm_cri_intents_free(v, n);
        {
                char *text = ncm_buf_steal(&b);
                return text ? text : strdup("");
        }
}

static void taken_is(fx *f, const char *want)
{
        char *got = taken(f);
        if (strcmp(got, want) != 0)
                fail_msg("intents '%s', want '%s'", got, want);
        free(got);
}

/*
 * The cri enforcer: a CRI admission that moves the shared pool publishes, in its one
 * transaction, the new container's intent (what CreateContainer's patch carries) and the
 * other containers' on the pool (their UpdateContainerResources); a refusal publishes
 * nothing; a release moves them back; a removed pod's intents go.
 */
static void test_cri_node_enforcer_intents(void **state)
{
        fx *f = *state;
        ncm_cri_container_config b =
                        request("sb", "ub", "/kubepods/burstable/podub", "web", 250, 0, 0);
        ncm_cri_container_config g =
                        request("sg", "ug", "/kubepods/podug", "app", 2000, 2000, 1 << 28);
        ncm_cri_container_config big =
                        request("sz", "uz", "/kubepods/poduz", "big", 8000, 8000, 1 << 28);
        const char *cpus = NULL, *mems = NULL;

        /* the node with the cri enforcer (its UpdateContainerResources intents carry "" for
         * cpuset.mems when the node leaves it alone, the kubelet's default) */
        f->cn = ncm_cri_node_free(f->cn);
        f->nd = ncm_node_dir_close(f->nd);
        ncm_enforcer_free(f->enf);
        assert_int_equal(ncm_enforcer_cri_new(NULL, &f->enf, NULL), 0);
        assert_string_equal(ncm_enforcer_name(f->enf), "cri");
        open_cn(f);
        taken_is(f, "");

        create(f, &b, NCM_CRI_ADMIT, "0-3", "cb");
        taken_is(f, "ub/web=0-3@");
        /* two exclusive CPUs: the pool shrinks, and the one admission says so for both */
        create(f, &g, NCM_CRI_ADMIT, "1-2", "cg");
        taken_is(f, "ub/web=0,3@ ug/app=1-2@");
        assert_int_equal(ncm_enforcer_cri_intent(f->enf, "ug", "app", &cpus, &mems), 1);
        assert_string_equal(cpus, "1-2");
        /* cpuset.mems is the node's rule: the kubelet's default leaves it to the runtime */
        assert_null(mems);
        /* refused: rolled back, nothing published */
        create(f, &big, NCM_CRI_REFUSE, NULL, NULL);
        taken_is(f, "");
        assert_int_equal(ncm_enforcer_cri_intent(f->enf, "uz", "big", &cpus, &mems), 0);
        /* a reconcile that changes nothing publishes nothing new */
        assert_int_equal(ncm_node_reconcile(f->t.node, NULL), 0);
        taken_is(f, "");
        {
                ncm_ctl_result res = NCM_CTL_RESULT_INIT;
                assert_int_equal(ncm_cri_node_sandbox_removed(f->cn, "sg", &res, NULL), 0);
                assert_true(res.pool_changed);
                ncm_ctl_result_done(&res);
        }
        taken_is(f, "ub/web=0-3@");
        assert_int_equal(ncm_enforcer_cri_intent(f->enf, "ug", "app", &cpus, &mems), 0);
        /* not a cri enforcer: nothing to take */
        {
                ncm_enforcer *none = NULL;
                ncm_cri_intent *v = NULL;
                size_t n = 0;
                assert_int_equal(ncm_enforcer_none_new(&none, NULL), 0);
                assert_int_equal(ncm_enforcer_cri_take(none, &v, &n), -EINVAL);
                assert_int_equal(ncm_enforcer_cri_intent(none, "ub", "web", &cpus, &mems), 0);
                ncm_enforcer_free(none);
        }
}

/*
 * The one road (issue 25's done-when): a CRI admission that moves the shared pool publishes, in
 * its one transaction, the new container's cpusets (what its CreateContainer carries) and the
 * other containers' UpdateContainerResources intents, which the machine sends at once: no
 * ListContainers, no ContainerStatus, no other decision in between.
 */
static void test_cri_node_admission_moves_pool_intents(void **state)
{
        fx *f = *state;
        ncm_cri_container_config b =
                        request("sb", "ub", "/kubepods/burstable/podub", "web", 250, 0, 0);
        ncm_cri_container_config g =
                        request("sg", "ug", "/kubepods/podug", "app", 2000, 2000, 1 << 28);
        ncm_cri_decision d;
        ncm_cri_update *u = NULL;
        ncm_cri_sync *s = NULL;
        ncm_cri_sync_action a;
        size_t n = 0;

        f->cn = ncm_cri_node_free(f->cn);
        f->nd = ncm_node_dir_close(f->nd);
        ncm_enforcer_free(f->enf);
        assert_int_equal(ncm_enforcer_cri_new(NULL, &f->enf, NULL), 0);
        open_cn(f);
        create(f, &b, NCM_CRI_ADMIT, "0-3", NULL);
        /* as nodecmd does: the intents are taken when the admission is told, before the runtime
         * answers; web's own, without an id yet, is its CreateContainer's */
        assert_int_equal(ncm_cri_node_intents(f->cn, f->enf, &u, &n), 0);
        assert_int_equal(n, 0);
        ncm_cri_updates_free(u, n);
        {
                ncm_ctl_result res = NCM_CTL_RESULT_INIT;
                assert_int_equal(ncm_cri_node_created(f->cn, "ub", "web", "cb", &res, NULL), 0);
                ncm_ctl_result_done(&res);
        }

        /* one call, one transaction: the Guaranteed container takes CPUs 1-2 */
        assert_int_equal(ncm_cri_node_create(f->cn, &g, &d, NULL), 0);
        assert_int_equal(d.action, NCM_CRI_ADMIT);
        assert_true(d.ctl.pool_changed);
        assert_string_equal(d.cpuset_cpus, "1-2");
        ncm_cri_decision_done(&d);
        /* cb's intent, by its runtime id; app's own rides on its CreateContainer (no id yet) */
        assert_int_equal(ncm_cri_node_intents(f->cn, f->enf, &u, &n), 0);
        assert_int_equal(n, 1);
        assert_string_equal(u[0].id, "cb");
        assert_string_equal(u[0].cpuset_cpus, "0,3");
        /* ... and the machine sends it as it is */
        assert_int_equal(ncm_cri_sync_new(NULL, 0, &s), 0);
        assert_int_equal(ncm_cri_sync_intents(s, u, n), 0);
        assert_int_equal(ncm_cri_sync_next(s, 0, &a), 1);
        /* the start-up run's ListContainers first, then the intent */
        assert_int_equal(a.req.method, NCM_CRI_LIST_CONTAINERS);
        assert_int_equal(ncm_cri_sync_next(s, 0, &a), 1);
        assert_int_equal(a.what, NCM_CRI_SYNC_SEND);
        assert_int_equal(a.req.method, NCM_CRI_UPDATE_CONTAINER_RESOURCES);
        assert_string_equal(a.req.id, "cb");
        assert_string_equal(a.req.cpuset_cpus, "0,3");
        ncm_cri_sync_free(s);
        /* taken: the next take is empty */
        assert_int_equal(ncm_cri_node_intents(f->cn, f->enf, &u, &n), 0);
        assert_int_equal(n, 0);
        ncm_cri_updates_free(u, n);
}

/* A CreateContainer decoded once and patched in place packs what the bytes' patch packs. */
static void test_cri_patch_in_place(void **state)
{
        const uint8_t bare[] = {0x0a, 0x01, 's'};
        ncm_cri_decision d = {0};
        ncm_cri_container_config c;
        ncm_buf once = NCM_BUF_INIT, again = NCM_BUF_INIT;
        (void)state;

        d.cpuset_cpus = (char *)"3";
        d.cpuset_mems = (char *)"0";
        assert_int_equal(ncm_cri_decode_create_container(bare, sizeof(bare), &c, NULL), 0);
        assert_non_null(c.msg);
        assert_int_equal(ncm_cri_decision_apply_config(&d, &c, &once, NULL), 0);
        assert_int_equal(ncm_cri_decision_apply(&d, bare, sizeof(bare), &again, NULL), 0);
        assert_int_equal(once.len, again.len);
        assert_memory_equal(once.data, again.data, once.len);
        ncm_cri_container_config_done(&c);
        /* a config not decoded from bytes has nothing to patch in place */
        {
                ncm_cri_container_config none = {0};
                ncm_error err = NCM_ERROR_INIT;
                ncm_buf out = NCM_BUF_INIT;
                assert_int_equal(ncm_cri_decision_apply_config(&d, &none, &out, &err), -EINVAL);
                assert_string_equal(err.msg, "CreateContainerRequest: not decoded");
                ncm_buf_done(&out);
        }
        ncm_buf_done(&once);
        ncm_buf_done(&again);
}

/*
 * Behind a kubelet the kubelet ran its resource-fit predicates: the CRI proxy's admissions do
 * not run them again (NCM_NODE_KUBELET_ADMITTED), while the node's own callers do: allocatable
 * cpu is 3 (CPU 0 reserved), and three Burstable pods of 1.5 CPU each are the kubelet's to
 * allow.
 */
static void test_cri_node_kubelet_ran_the_predicates(void **state)
{
        fx *f = *state;
        ncm_cri_container_config a =
                        request("sa", "ua", "/kubepods/burstable/podua", "a", 1500, 0, 0);
        ncm_cri_container_config b =
                        request("sb", "ub", "/kubepods/burstable/podub", "b", 1500, 0, 0);
        ncm_cri_container_config c =
                        request("sc", "uc", "/kubepods/burstable/poduc", "c", 1500, 0, 0);
        const char *text = "{\"metadata\": {\"uid\": \"ud\", \"name\": \"d\"}, \"spec\": "
                           "{\"containers\": [{\"name\": \"d\", \"resources\": {\"requests\": "
                           "{\"cpu\": \"100m\"}}}]}}";
        ncm_autoptr(ncm_pod) d = NULL;
        ncm_node_admission *adm = NULL;

        create(f, &a, NCM_CRI_ADMIT, "0-3", "ca");
        create(f, &b, NCM_CRI_ADMIT, "0-3", "cb");
        create(f, &c, NCM_CRI_ADMIT, "0-3", "cc");
        assert_int_equal(ncm_pod_parse(text, strlen(text), NULL, &d, NULL), 0);
        assert_int_equal(ncm_node_admit(f->t.node, d, 0, &adm, NULL), 0);
        assert_false(adm->admitted);
        assert_string_equal(adm->reason, "OutOfcpu");
        assert_string_equal(adm->message, "Node didn't have enough resource: cpu, requested: 100, "
                                          "used: 4500, capacity: 3000");
        ncm_node_admission_free(adm);
}

/* DIR/NAME replaced by TEXT (what a crash, or a person, may leave). */
static void put_new(fx *f, const char *name, const char *text)
{
        char path[4096];

        snprintf(path, sizeof(path), "%s/%s", f->dir, name);
        tu_write_file(path, text);
}

/*
 * The journal (docs/runtimes.md, "Cost"): an admission appends to it instead of rewriting the
 * record; the next start puts it into the record and empties it; a last line a crash cut short
 * is ignored; lines a crash left after the record was rewritten are not applied twice; a
 * damaged line is named; a journal grown long is folded into the record.
 */
static void test_cri_node_journal(void **state)
{
        fx *f = *state;
        ncm_cri_container_config g =
                        request("sg", "ug", "/kubepods/podug", "app", 1000, 1000, 1 << 28);
        ncm_cri_container_config b =
                        request("sb", "ub", "/kubepods/burstable/podub", "web", 250, 0, 0);
        ncm_cri_container_config x =
                        request("sx", "ux", "/kubepods/podux", "app", 1000, 1000, 1 << 28);
        ncm_ctl_result res = NCM_CTL_RESULT_INIT;
        ncm_error err = NCM_ERROR_INIT;
        char *text, *saved;

        create(f, &g, NCM_CRI_ADMIT, "1", "cg");
        create(f, &b, NCM_CRI_ADMIT, "0,2-3", "cb");
        /* two containers added, two ids: the record itself not written */
        assert_int_equal(tu_file_lines(f->dir, NCM_CRI_JOURNAL_NAME), 4);
        text = tu_file_text(f->dir, NCM_CRI_CONTAINERS_NAME);
        assert_string_equal(text, "");
        free(text);

        /* a crash cut the last append short */
        tu_append_file(f->dir, NCM_CRI_JOURNAL_NAME, "{\"gen\": 0, \"id\": {\"pod\": \"ub\", \"na");
        reopen(f);
        assert_int_equal(ncm_cri_node_num_containers(f->cn), 2);
        assert_cpusets(f, "cg", "1");
        assert_cpusets(f, "cb", "0,2-3");
        text = tu_file_text(f->dir, NCM_CRI_JOURNAL_NAME);
        assert_string_equal(text, "");
        free(text);
        text = tu_file_text(f->dir, NCM_CRI_CONTAINERS_NAME);
        assert_non_null(strstr(text, "{\"generation\": 1, \"sandboxes\": ["));
        assert_non_null(strstr(text, "\"cg\""));
        assert_non_null(strstr(text, "\"cb\""));
        free(text);

        /* the record rewritten (a release), then a crash before the journal was emptied */
        create(f, &x, NCM_CRI_ADMIT, "2", "cx");
        saved = tu_file_text(f->dir, NCM_CRI_JOURNAL_NAME);
        assert_non_null(strstr(saved, "{\"gen\": 1, \"add\": {\"id\": \"\", \"pod\": \"ux\""));
        assert_int_equal(ncm_cri_node_container_removed(f->cn, "cx", &res, NULL), 0);
        ncm_ctl_result_done(&res);
        put_new(f, NCM_CRI_JOURNAL_NAME, saved);
        free(saved);
        reopen(f);
        assert_int_equal(ncm_cri_node_num_containers(f->cn), 2);
        assert_cpusets(f, "cx", NULL);
        assert_cpusets(f, "cb", "0,2-3");
        text = tu_file_text(f->dir, NCM_CRI_CONTAINERS_NAME);
        assert_non_null(strstr(text, "{\"generation\": 3, "));
        free(text);

        /* a damaged line that is not the last: the start stops, naming it */
        put_new(f, NCM_CRI_JOURNAL_NAME, "{\"gen\": 3, \"add\": 5}\n{\"gen\": 3}\n");
        f->cn = ncm_cri_node_free(f->cn);
        assert_int_equal(ncm_cri_node_open(f->dir, &f->t, &f->cn, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "/nodecm_cri_journal:1: add"));
        put_new(f, NCM_CRI_JOURNAL_NAME, "{\"gen\": 3}\n");
        assert_int_equal(ncm_cri_node_open(f->dir, &f->t, &f->cn, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "/nodecm_cri_journal:1: expected \"add\" or \"id\""));
        put_new(f, NCM_CRI_JOURNAL_NAME, "");
        reopen(f);

        /* grown longer than the record it amends by 64 lines: folded in at the next sync */
        for (int i = 0; i < 70; i++) {
                char name[32], id[32];
                ncm_cri_container_config c;
                snprintf(name, sizeof(name), "w%d", i);
                snprintf(id, sizeof(id), "cw%d", i);
                c = request("sb", "ub", "/kubepods/burstable/podub", name, 0, 0, 0);
                create(f, &c, NCM_CRI_ADMIT, "0,2-3", id);
        }
        assert_int_equal(ncm_cri_node_num_containers(f->cn), 72);
        assert_true(tu_file_lines(f->dir, NCM_CRI_JOURNAL_NAME) < 20);
        text = tu_file_text(f->dir, NCM_CRI_CONTAINERS_NAME);
        assert_non_null(strstr(text, "{\"generation\": 4, "));
        free(text);
        reopen(f);
        assert_int_equal(ncm_cri_node_num_containers(f->cn), 72);
        assert_cpusets(f, "cw69", "0,2-3");
}

static void test_cri_node_refuses_with_the_kubelets_text(void **state)
{
        fx *f = *state;
        ncm_cri_container_config g =
                        request("sg", "ug", "/kubepods/podug", "app", 2000, 2000, 1 << 28);
        ncm_cri_container_config big =
                        request("sx", "ux", "/kubepods/podux", "app", 2000, 2000, 1 << 28);
        ncm_cri_decision d;
        char *before, *after;

        char *pods_before, *pods_after;
        /* the container is in the journals: the record and nodecm_pods were not rewritten */
        static const char *const files[] = {NCM_CRI_JOURNAL_NAME, NCM_CPU_CHECKPOINT_NAME,
                                            NCM_NODE_PODS_JOURNAL_NAME};
        ino_t ino[3];
        int n_files, n_temporaries;

        create(f, &g, NCM_CRI_ADMIT, "1-2", "cg");
        before = record_text(f);
        pods_before = tu_file_text(f->dir, NCM_NODE_PODS_JOURNAL_NAME);
        assert_non_null(strstr(pods_before, "\"put\": {\"removed\": [], \"pod\": "));
        for (size_t i = 0; i < 3; i++)
                ino[i] = inode_of(f->dir, files[i]);
        n_files = count_files(f->dir);
        n_temporaries = count_temporaries(f->dir);
        /* the next admission's temporary file is made (ncm_cri_node_sync) */
        assert_int_equal(n_temporaries, 1);
        assert_int_equal(ncm_cri_node_create(f->cn, &big, &d, NULL), 0);
        assert_int_equal(d.action, NCM_CRI_REFUSE);
        assert_int_equal(d.code, NCM_RPC_RESOURCE_EXHAUSTED);
        assert_string_equal(d.message, "UnexpectedAdmissionError: Allocate failed due to not "
                                       "enough cpus available to satisfy request: requested=2, "
                                       "available=1, which is unexpected");
        ncm_cri_decision_done(&d);
        after = record_text(f);
        assert_string_equal(before, after);
        pods_after = tu_file_text(f->dir, NCM_NODE_PODS_JOURNAL_NAME);
        assert_string_equal(pods_before, pods_after);
        free(pods_before);
        free(pods_after);
        free(before);
        free(after);
        assert_null(ncm_node_pod(f->t.node, "ux"));
        /* a refusal writes nothing at all: not one file replaced, the temporary files it
         * wrote emptied and kept for the next admission, none more */
        for (size_t i = 0; i < 3; i++)
                assert_int_equal(inode_of(f->dir, files[i]), ino[i]);
        assert_int_equal(count_files(f->dir), n_files);
        assert_int_equal(count_temporaries(f->dir), n_temporaries);
        assert_int_equal(count_nonempty_temporaries(f->dir), 0);
        /* and the next admission uses them: whole files, nothing left over */
        big = request("sx", "ux", "/kubepods/podux", "app", 1000, 1000, 1 << 28);
        assert_int_equal(ncm_cri_node_create(f->cn, &big, &d, NULL), 0);
        assert_int_equal(d.action, NCM_CRI_ADMIT);
        assert_string_equal(d.cpuset_cpus, "3");
        ncm_cri_decision_done(&d);
        assert_int_equal(count_temporaries(f->dir), 0);
        assert_int_equal(ncm_cri_node_sync(f->cn, NULL), 0);
        assert_int_equal(count_temporaries(f->dir), 1);
        reopen(f);
        assert_int_equal(count_temporaries(f->dir), 0);
        assert_non_null(ncm_node_pod(f->t.node, "ux"));

        /* a Guaranteed parent whose container cannot be Guaranteed is not decided */
        big = request("sy", "uy", "/kubepods/poduy", "app", 1000, 1000, 0);
        assert_int_equal(ncm_cri_node_create(f->cn, &big, &d, NULL), -EINVAL);
}

static void test_cri_node_passes_what_is_not_a_pods(void **state)
{
        fx *f = *state;
        ncm_cri_container_config c = request("s?", "", "", "app", 1000, 1000, 1 << 28);
        ncm_cri_decision d;

        /* no pod UID, and a sandbox nodecm never saw */
        c.has_sandbox = false;
        assert_int_equal(ncm_cri_node_create(f->cn, &c, &d, NULL), 0);
        assert_int_equal(d.action, NCM_CRI_PASS);
        ncm_cri_decision_done(&d);
        assert_int_equal(ncm_cri_node_num_containers(f->cn), 0);
}

static void test_cri_node_failed_creation_releases(void **state)
{
        fx *f = *state;
        ncm_cri_container_config g =
                        request("sg", "ug", "/kubepods/podug", "app", 2000, 2000, 1 << 28);
        ncm_ctl_result res = NCM_CTL_RESULT_INIT;

        create(f, &g, NCM_CRI_ADMIT, "1-2", NULL);
        assert_int_equal(ncm_cri_node_created(f->cn, "ug", "app", NULL, &res, NULL), 0);
        assert_true(res.pool_changed);
        ncm_ctl_result_done(&res);
        assert_int_equal(ncm_cri_node_num_containers(f->cn), 0);
        /* the kubelet tries again: the same CPUs */
        create(f, &g, NCM_CRI_ADMIT, "1-2", "cg");
}

static ncm_cri_container listed(const char *id, const char *sb, const char *name, int state,
                                uint32_t attempt)
{
        ncm_cri_container c = {0};
        c.id = (char *)id;
        c.pod_sandbox_id = (char *)sb;
        c.name = (char *)name;
        c.state = state;
        c.attempt = attempt;
        return c;
}

static void test_cri_node_reconcile(void **state)
{
        fx *f = *state;
        ncm_cri_container_config g =
                        request("sg", "ug", "/kubepods/podug", "app", 2000, 2000, 1 << 28);
        ncm_cri_container_config b =
                        request("sb", "ub", "/kubepods/burstable/podub", "web", 250, 0, 0);
        ncm_cri_container_config p =
                        request("sp", "up", "/kubepods/podup", "app", 1000, 1000, 1 << 28);
        ncm_cri_container_config q =
                        request("sq", "uq", "/kubepods/besteffort/poduq", "app", 0, 0, 0);
        ncm_cri_update *u = NULL;
        ncm_ctl_result res = NCM_CTL_RESULT_INIT;
        size_t n = 0, stale = 0;

        create(f, &b, NCM_CRI_ADMIT, "0-3", "cb");
        create(f, &g, NCM_CRI_ADMIT, "1-2", "cg");
        /* two creations in flight when the process died: one the runtime made, one not */
        create(f, &p, NCM_CRI_ADMIT, "3", NULL);
        create(f, &q, NCM_CRI_ADMIT, "0", NULL);
        reopen(f);
        {
                /* the runtime lost cg; it made up's container (attempt 0 was an older one) */
                ncm_cri_container v[] = {
                                listed("cb", "sb", "web", NCM_CRI_CONTAINER_RUNNING, 0),
                                listed("old", "sp", "app", NCM_CRI_CONTAINER_EXITED, 0),
                                listed("cp", "sp", "app", NCM_CRI_CONTAINER_RUNNING, 1),
                };
                /* not yet: the runtime may still be creating uq's; up's is adopted now */
                assert_int_equal(ncm_cri_node_reconcile(f->cn, v, 3, false, &u, &n, &stale, &res,
                                                        NULL),
                                 0);
                /* cg's CPUs go back to the shared pool */
                assert_int_equal(stale, 1);
                assert_true(res.pool_changed);
                ncm_cri_updates_free(u, n);
                ncm_ctl_result_done(&res);
                res = (ncm_ctl_result)NCM_CTL_RESULT_INIT;
                assert_int_equal(ncm_cri_node_reconcile(f->cn, v, 3, true, &u, &n, &stale, &res,
                                                        NULL),
                                 0);
        }
        /* uq's creation never happened: released once the runtime had time */
        assert_int_equal(stale, 1);
        assert_int_equal(ncm_cri_node_num_containers(f->cn), 2);
        ncm_ctl_result_done(&res);
        assert_int_equal(n, 2);
        assert_string_equal(u[0].id, "cb");
        assert_string_equal(u[0].cpuset_cpus, "0-2");
        assert_string_equal(u[1].id, "cp");
        assert_string_equal(u[1].cpuset_cpus, "3");
        ncm_cri_updates_free(u, n);
        assert_cpusets(f, "cp", "3");
        /* not at start-up: a creation in flight is left alone */
        create(f, &q, NCM_CRI_ADMIT, "0-2", NULL);
        {
                ncm_cri_container v[] = {
                                listed("cb", "sb", "web", NCM_CRI_CONTAINER_RUNNING, 0),
                                listed("cp", "sp", "app", NCM_CRI_CONTAINER_RUNNING, 1),
                };
                res = (ncm_ctl_result)NCM_CTL_RESULT_INIT;
                assert_int_equal(ncm_cri_node_reconcile(f->cn, v, 2, false, &u, &n, &stale, &res,
                                                        NULL),
                                 0);
                ncm_ctl_result_done(&res);
        }
        assert_int_equal(stale, 0);
        assert_int_equal(ncm_cri_node_num_containers(f->cn), 3);
        ncm_cri_updates_free(u, n);
}

static void test_cri_decision_apply_and_differs(void **state)
{
        ncm_cri_decision d = {0};
        ncm_buf out = NCM_BUF_INIT;
        ncm_cri_container_config c;
        const uint8_t bare[] = {0x0a, 0x01, 's'};
        (void)state;

        d.cpuset_cpus = (char *)"3";
        d.cpuset_mems = (char *)"0";
        assert_int_equal(ncm_cri_decision_apply(&d, bare, sizeof(bare), &out, NULL), 0);
        assert_int_equal(ncm_cri_decode_create_container((const uint8_t *)out.data, out.len, &c,
                                                         NULL),
                         0);
        assert_string_equal(c.resources.cpuset_cpus, "3");
        assert_string_equal(c.resources.cpuset_mems, "0");
        assert_string_equal(c.pod_sandbox_id, "s");
        ncm_cri_container_config_done(&c);
        ncm_buf_done(&out);

        assert_false(ncm_cri_cpuset_differs("0-3", "0,1,2,3"));
        assert_true(ncm_cri_cpuset_differs("0-3", "0-2"));
        assert_true(ncm_cri_cpuset_differs("1", ""));
        assert_false(ncm_cri_cpuset_differs("", "0-7"));
        assert_false(ncm_cri_cpuset_differs(NULL, "0-7"));
        assert_true(ncm_cri_cpuset_differs("1", "garbage"));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test_setup_teardown(test_cri_node_writes, setup, teardown),
                        cmocka_unit_test_setup_teardown(test_cri_node_admits_as_containers_come,
                                                        setup, teardown),
                        cmocka_unit_test_setup_teardown(
                                        test_cri_node_refuses_with_the_kubelets_text, setup,
                                        teardown),
                        cmocka_unit_test_setup_teardown(test_cri_node_passes_what_is_not_a_pods,
                                                        setup, teardown),
                        cmocka_unit_test_setup_teardown(test_cri_node_failed_creation_releases,
                                                        setup, teardown),
                        cmocka_unit_test_setup_teardown(test_cri_node_reconcile, setup, teardown),
                        cmocka_unit_test_setup_teardown(test_cri_node_journal, setup, teardown),
                        cmocka_unit_test_setup_teardown(test_cri_node_kubelet_ran_the_predicates,
                                                        setup, teardown),
                        cmocka_unit_test(test_cri_decision_apply_and_differs),
                        cmocka_unit_test_setup_teardown(test_cri_node_enforcer_intents, setup,
                                                        teardown),
                        cmocka_unit_test_setup_teardown(test_cri_node_admission_moves_pool_intents,
                                                        setup, teardown),
                        cmocka_unit_test(test_cri_patch_in_place),
                        cmocka_unit_test(test_cri_node_dra_devices),
                        cmocka_unit_test(test_cri_node_dra_resize),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
