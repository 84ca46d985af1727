/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/map: the scene of a node (each CPU's use and holder, room per NUMA node with and without
 * full-pcpus-only, devices and their holders, pods known only from the checkpoint, explanations
 * from a history or replayed), and the page: every CPU drawn once with its holder, both
 * scales, hostile names escaped, the hooks (memory, hugepages, isolated and nohz_full CPUs, PCI
 * devices) absent when empty and drawn when filled, the node's PCI devices in their hook, the
 * steps and their links.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/map.h>
#include "testutil.h"

typedef struct fx {
        ncm_topo *t;
        ncm_node_config *cfg;
        ncm_node *n;
} fx;

static const char devices[] = "{\"example.com/gpu\": [{\"id\": \"gpu0\", \"numa\": [0]}, "
                              "{\"id\": \"gpu1\", \"numa\": [1]}, {\"id\": \"gpu9\"}]}";

static void fx_new(fx *f, const char *synthetic, const char *kubelet, bool with_devices)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_node_options o = {0};

        *f = (fx){0};
        if (ncm_topo_from_synthetic(synthetic, &f->t, &err) < 0 ||
            ncm_node_config_parse(kubelet, strlen(kubelet), "kubelet", "node.kubelet", &f->cfg,
                                  &err) < 0)
                fail_msg("%s", err.msg);
        if (with_devices) {
                o.devices = devices;
                o.devices_len = strlen(devices);
        }
        if (ncm_node_new(f->t, f->cfg, &o, &f->n, &err) < 0)
                fail_msg("node: %s", err.msg);
}

static void fx_done(fx *f)
{
        ncm_node_free(f->n);
        ncm_node_config_free(f->cfg);
        ncm_topo_free(f->t);
}

static ncm_pod *pod(const char *text)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *p = NULL;

        if (ncm_pod_parse(text, strlen(text), "pod", &p, &err) < 0)
                fail_msg("pod: %s", err.msg);
        return p;
}

/*
 * A pod as a node may hold it without the API server's checks (written by an older nodecm,
 * restored unchecked: NCM__POD_STORED): whatever its names hold, the page must carry safely.
 */
static ncm_pod *pod_stored(const char *text)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *p = NULL;

        if (tu_pod_parse_as_in_go(text, strlen(text), "pod", &p, &err) < 0)
                fail_msg("pod: %s", err.msg);
        return p;
}

/* Admit TEXT (recorded in H when given); returns whether it was admitted. */
static bool admit_pod(fx *f, ncm_map_history *h, const ncm_pod *p)
{
        ncm_autoptr(ncm_node_admission) a = NULL;
        ncm_error err = NCM_ERROR_INIT;

        assert_int_equal(ncm_node_admit(f->n, p, NCM_NODE_EXPLAIN, &a, &err), 0);
        if (h)
                assert_int_equal(ncm_map_history_admission(h, p, a), 0);
        return a->admitted;
}

static bool admit(fx *f, ncm_map_history *h, const char *text)
{
        ncm_autoptr(ncm_pod) p = pod(text);

        return admit_pod(f, h, p);
}

/* A stored pod (pod_stored) admitted again, as a restart re-admits what the node holds. */
static bool admit_stored(fx *f, const char *text)
{
        ncm_autoptr(ncm_pod) p = pod_stored(text);

        return admit_pod(f, NULL, p);
}

static const char db_pod[] =
                "{\"metadata\": {\"uid\": \"u-db\", \"name\": \"db\", \"namespace\": \"prod\"}, "
                "\"spec\": {\"containers\": [{\"name\": \"app\", \"resources\": {\"limits\": "
                "{\"cpu\": \"4\", \"memory\": \"1G\", \"example.com/gpu\": \"1\"}}}]}}";
static const char web_pod[] =
                "{\"metadata\": {\"uid\": \"u-web\", \"name\": \"web\"}, \"spec\": "
                "{\"containers\": [{\"name\": \"nginx\", \"resources\": {\"requests\": {\"cpu\": "
                "\"500m\"}}}]}}";

static const char kubelet_full[] = "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": "
                                   "\"0\", \"cpuManagerPolicyOptions\": {\"full-pcpus-only\": "
                                   "\"true\"}, \"topologyManagerPolicy\": \"single-numa-node\"}";
static const char kubelet_plain[] = "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": "
                                    "\"0\", \"topologyManagerPolicy\": \"single-numa-node\"}";

/* 16 CPUs: two sockets of one NUMA node, 4 cores of 2 threads; CPUs 2N, 2N+1 share core 2N. */
#define SMALL "package:2 numa:1 l3:1 core:4 pu:2"

static const ncm_map_cpu *scene_cpu(const ncm_map_scene *s, int cpu)
{
        for (size_t i = 0; i < s->n_cpus; i++)
                if (s->cpus[i].cpu == cpu)
                        return &s->cpus[i];
        fail_msg("CPU %d not in the scene", cpu);
        return NULL;
}

static size_t count(const char *hay, const char *needle)
{
        size_t n = 0;
        for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
                n++;
        return n;
}

static char *render(const ncm_map_scene *s, const ncm_map_html_options *o)
{
        ncm_buf b = NCM_BUF_INIT;

        assert_int_equal(ncm_map_render_html(s, o, &b), 0);
        return ncm_buf_steal(&b);
}

static void test_map_scene_uses_and_room(void **state)
{
        fx f;
        ncm_autoptr(ncm_map_scene) s = NULL;
        ncm_error err = NCM_ERROR_INIT;
        const ncm_map_pod *db;
        int held = 0;

        fx_new(&f, SMALL, kubelet_full, true);
        assert_true(admit(&f, NULL, db_pod));
        assert_true(admit(&f, NULL, web_pod));
        assert_int_equal(ncm_map_scene_from_node(f.n, NULL, &s, &err), 0);
        assert_int_equal(s->n_cpus, 16);
        assert_true(s->pinning);
        assert_string_equal(s->reserved, "0");
        assert_string_equal(s->title, "node");
        assert_int_equal(s->step, -1);
        assert_non_null(strstr(s->settings, "cpuManagerPolicy static (full-pcpus-only)"));
        assert_non_null(strstr(s->settings, "topologyManagerPolicy single-numa-node"));
        assert_int_equal(scene_cpu(s, 0)->use, NCM_MAP_RESERVED);
        /* pods by UID: u-db, u-web */
        assert_int_equal(s->n_pods, 2);
        db = &s->pods[0];
        assert_string_equal(db->uid, "u-db");
        assert_string_equal(db->qos, "Guaranteed");
        assert_string_equal(db->ns, "prod");
        assert_int_equal(db->exclusive_cpus, 4);
        assert_true(db->containers[0].exclusive);
        assert_string_equal(db->containers[0].numa, "0");
        assert_string_equal(db->containers[0].devices, "example.com/gpu gpu0");
        assert_false(s->pods[1].containers[0].exclusive);
        assert_null(s->pods[1].containers[0].cpus);
        assert_string_equal(s->pods[1].qos, "Burstable");
        for (size_t i = 0; i < s->n_cpus; i++) {
                const ncm_map_cpu *c = &s->cpus[i];
                if (c->use != NCM_MAP_EXCLUSIVE)
                        continue;
                assert_int_equal(c->pod, 0);
                assert_int_equal(c->container, 0);
                assert_int_equal(c->numa, 0);
                held++;
        }
        assert_int_equal(held, 4);
        /* NUMA 0: CPU 0 reserved, 4 held; of the three free CPUs only a whole core counts
         * (CPU 0's sibling does not: its core holds a reserved CPU) */
        assert_int_equal(s->n_numa, 2);
        assert_int_equal(s->numa[0].cpus, 8);
        assert_int_equal(s->numa[0].reserved, 1);
        assert_int_equal(s->numa[0].exclusive, 4);
        assert_int_equal(s->numa[0].shared, 3);
        assert_int_equal(s->numa[0].room, 2);
        assert_int_equal(s->numa[1].room, 8);
        assert_int_equal(s->numa[1].socket, 1);
        /* devices by resource and id, their holders; gpu9 has no NUMA node */
        assert_int_equal(s->n_devices, 3);
        assert_string_equal(s->devices[0].id, "gpu0");
        assert_int_equal(s->devices[0].pod, 0);
        assert_int_equal(s->devices[0].container, 0);
        assert_int_equal(s->devices[1].pod, -1);
        assert_int_equal(s->devices[2].n_numa, 0);
        /* no hooks filled by the builder */
        assert_int_equal(s->n_pci, 0);
        assert_int_equal(s->numa[0].memory, 0);
        assert_null(s->numa[0].hugepages);
        for (size_t i = 0; i < s->n_cpus; i++)
                assert_int_equal(s->cpus[i].flags, 0);
        fx_done(&f);
}

static void test_map_scene_room_without_full_pcpus(void **state)
{
        fx f;
        ncm_autoptr(ncm_map_scene) s = NULL;

        fx_new(&f, SMALL, kubelet_plain, false);
        assert_true(admit(&f, NULL,
                          "{\"metadata\": {\"uid\": \"a\"}, \"spec\": {\"containers\": [{\"name\": "
                          "\"c\", \"resources\": {\"limits\": {\"cpu\": \"3\", \"memory\": "
                          "\"1G\"}}}]}}"));
        assert_int_equal(ncm_map_scene_from_node(f.n, NULL, &s, NULL), 0);
        /* any free CPU of the pool counts, the reserved one never: 8 - 1 - 3 */
        assert_int_equal(s->numa[0].room, 4);
        assert_non_null(strstr(s->room_rule, "reserved ones excepted"));
        fx_done(&f);
}

static void test_map_scene_none_policy(void **state)
{
        fx f;
        ncm_autoptr(ncm_map_scene) s = NULL;
        ncm_autofree char *page = NULL;

        fx_new(&f, SMALL, "{\"cpuManagerPolicy\": \"none\"}", false);
        assert_true(admit(&f, NULL, web_pod));
        assert_int_equal(ncm_map_scene_from_node(f.n, NULL, &s, NULL), 0);
        assert_false(s->pinning);
        for (size_t i = 0; i < s->n_cpus; i++)
                assert_int_equal(s->cpus[i].use, NCM_MAP_SHARED);
        assert_int_equal(s->numa[0].room, 0);
        assert_non_null(strstr(s->room_rule, "none"));
        page = render(s, NULL);
        assert_null(strstr(page, "room for"));
        fx_done(&f);
}

/* The isolation hook: the machine's isolated and nohz_full CPUs are marked and drawn. */
static void test_map_isolation_marks(void **state)
{
        fx f;
        ncm_autoptr(ncm_map_scene) s = NULL;
        ncm_autoptr(ncm_cpuset) iso = tu_cpuset("4-15");
        ncm_autoptr(ncm_cpuset) nohz = tu_cpuset("8-15");
        ncm_autofree char *page = NULL;
        ncm_error err = NCM_ERROR_INIT;

        (void)state;
        fx_new(&f, SMALL, kubelet_plain, false);
        assert_int_equal(ncm_topo_set_isolation(f.t, NCM_ISO_GIVEN_ISOLATED, iso, &err), 0);
        assert_int_equal(ncm_topo_set_isolation(f.t, NCM_ISO_GIVEN_NOHZ_FULL, nohz, &err), 0);
        assert_int_equal(ncm_map_scene_from_node(f.n, NULL, &s, NULL), 0);
        assert_int_equal(scene_cpu(s, 3)->flags, 0);
        assert_int_equal(scene_cpu(s, 4)->flags, NCM_MAP_CPU_ISOLATED);
        assert_int_equal(scene_cpu(s, 9)->flags, NCM_MAP_CPU_ISOLATED | NCM_MAP_CPU_NOHZ_FULL);
        page = render(s, NULL);
        assert_non_null(strstr(page, "data-legend=\"isolated\""));
        assert_non_null(strstr(page, "data-legend=\"nohz_full\""));
        fx_done(&f);
}

static void test_map_explanations(void **state)
{
        fx f;
        ncm_autoptr(ncm_map_history) h = ncm_map_history_new();
        ncm_autoptr(ncm_map_scene) s = NULL;
        ncm_autoptr(ncm_map_scene) r = NULL;
        ncm_autoptr(ncm_map_scene) none = NULL;
        ncm_map_scene_options o = {.title = "t", .caption = "c", .history = h, .step = 1};
        ncm_map_scene_options replay = {.flags = NCM_MAP_REPLAY, .step = -1};

        assert_non_null(h);
        fx_new(&f, SMALL, kubelet_full, true);
        assert_true(admit(&f, h, db_pod));
        assert_true(admit(&f, NULL, web_pod));
        assert_int_equal(ncm_map_history_step(h, 0, "admit db: admitted\nsecond line"), 0);
        assert_int_equal(ncm_map_history_step(h, 1, "admit web: admitted"), 0);
        /* from the history: db only (web was not recorded) */
        assert_int_equal(ncm_map_scene_from_node(f.n, &o, &s, NULL), 0);
        assert_string_equal(s->title, "t");
        assert_string_equal(s->caption, "c");
        assert_int_equal(s->step, 1);
        assert_non_null(s->pods[0].explain);
        assert_string_equal(s->pods[0].explain_from, "admission");
        assert_non_null(strstr(s->pods[0].explain, "admit db: admitted"));
        assert_non_null(strstr(s->pods[0].explain, "merged"));
        assert_null(s->pods[1].explain);
        assert_int_equal(s->n_steps, 2);
        assert_string_equal(s->steps[0].text, "admit db: admitted");
        /* replayed: both, and the node did not change */
        assert_int_equal(ncm_map_scene_from_node(f.n, &replay, &r, NULL), 0);
        assert_string_equal(r->pods[0].explain_from, "replay");
        assert_non_null(strstr(r->pods[0].explain, "the same CPUs and devices"));
        assert_non_null(r->pods[1].explain);
        assert_int_equal(ncm_node_num_pods(f.n), 2);
        assert_int_equal(ncm_map_scene_from_node(f.n, NULL, &none, NULL), 0);
        for (size_t i = 0; i < none->n_cpus; i++)
                assert_int_equal(none->cpus[i].use, r->cpus[i].use);
        assert_null(none->pods[0].explain);
        fx_done(&f);
}

/* One pod's explanation on its own (nodecmd's /map/explain), and a page that fetches it. */
static void test_map_explain_pod(void **state)
{
        fx f;
        ncm_buf b = NCM_BUF_INIT;
        ncm_error err = NCM_ERROR_INIT;
        ncm_autoptr(ncm_map_scene) s = NULL;
        ncm_autofree char *page = NULL;
        ncm_map_html_options o = {.explain_url = "/map/explain?pod="};

        fx_new(&f, SMALL, kubelet_full, true);
        assert_true(admit(&f, NULL, db_pod));
        assert_true(admit_stored(&f,
                                 "{\"metadata\": {\"uid\": \"a b/c\"}, \"spec\": {\"containers\": "
                                 "[{\"name\": \"c\"}]}}"));
        assert_int_equal(ncm_map_explain_pod(f.n, "u-db", &b, &err), 0);
        assert_non_null(strstr(b.data, "Decided again now, with its CPUs and devices free: the "
                                       "same CPUs and devices."));
        assert_non_null(strstr(b.data, "admit db: admitted: app exclusive"));
        ncm_buf_done(&b);
        assert_int_equal(ncm_map_explain_pod(f.n, "nope", &b, &err), -ENOENT);
        assert_null(b.data);
        assert_int_equal(ncm_node_num_pods(f.n), 2);
        /* a page without the explanations asks for them, the UID encoded */
        assert_int_equal(ncm_map_scene_from_node(f.n, NULL, &s, NULL), 0);
        page = render(s, &o);
        assert_non_null(strstr(page, "<details data-explain=\"/map/explain?pod=u-db\">"));
        assert_non_null(strstr(page, "<details data-explain=\"/map/explain?pod=a%20b%2Fc\">"));
        fx_done(&f);
}

/* A long explanation is cut: lines and the whole text, at character boundaries. */
static void test_map_explanation_cut(void **state)
{
        fx f;
        ncm_autoptr(ncm_map_history) h = ncm_map_history_new();
        ncm_autoptr(ncm_map_scene) s = NULL;
        ncm_map_scene_options o = {.history = h, .step = -1};
        const char *p, *line;

        /* 32 NUMA nodes: a 1-CPU container has a hint for every set of them, cut at 256 */
        fx_new(&f, "package:2 numa:16 core:2 pu:2",
               "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0\", "
               "\"topologyManagerPolicy\": \"best-effort\", \"topologyManagerPolicyOptions\": "
               "{\"max-allowable-numa-nodes\": \"32\"}}",
               false);
        assert_true(admit(
                        &f, h,
                        "{\"metadata\": {\"uid\": \"one\"}, \"spec\": {\"containers\": [{\"name\": "
                        "\"c\", \"resources\": {\"limits\": {\"cpu\": \"1\", \"memory\": "
                        "\"1G\"}}}]}}"));
        assert_int_equal(ncm_map_scene_from_node(f.n, &o, &s, NULL), 0);
        p = s->pods[0].explain;
        assert_non_null(p);
        assert_true(strlen(p) <= 2600);
        for (line = p; *line;) {
                const char *nl = strchr(line, '\n');
                assert_non_null(nl);
                assert_true(nl - line <= 244);
                line = nl + 1;
        }
        assert_non_null(strstr(p, " …\n"));
        fx_done(&f);
}

static void test_map_page_small(void **state)
{
        fx f;
        ncm_autoptr(ncm_map_scene) s = NULL;
        ncm_autofree char *page = NULL;
        ncm_map_scene_options o = {.flags = NCM_MAP_REPLAY, .step = -1};

        fx_new(&f, SMALL, kubelet_full, true);
        assert_true(admit(&f, NULL, db_pod));
        assert_true(admit(&f, NULL, web_pod));
        assert_int_equal(ncm_map_scene_from_node(f.n, &o, &s, NULL), 0);
        page = render(s, NULL);
        assert_true(strncmp(page, "<!DOCTYPE html>", 15) == 0);
        assert_non_null(strstr(page, "</html>\n"));
        /* self-contained: nothing fetched */
        assert_null(strstr(page, "src="));
        assert_null(strstr(page, "<link"));
        assert_null(strstr(page, "@import"));
        assert_null(strstr(page, "EventSource"));
        assert_non_null(strstr(page, "<svg id=\"map\" class=\"detailed\""));
        /* every CPU once, with its holder */
        assert_int_equal(count(page, "data-cpu=\""), 16);
        assert_int_equal(count(page, "data-holder=\"reserved\""), 1);
        assert_int_equal(count(page, "data-holder=\"u-db/app\""), 4 + 1); /* + gpu0 */
        assert_int_equal(count(page, "data-holder=\"shared\""), 11);
        /* the devices: held, free, and one without a NUMA node */
        assert_non_null(strstr(page, "data-device=\"example.com/gpu/gpu0\""));
        assert_non_null(strstr(page, "devices without NUMA affinity"));
        /* legend, cards and explanations */
        assert_non_null(strstr(page, "data-legend=\"u-db\""));
        assert_null(strstr(page, "data-legend=\"u-web\"")); /* holds nothing of its own */
        assert_int_equal(count(page, "class=\"pod\" id=\"pod-"), 2);
        assert_non_null(strstr(page, "why (decided again now)"));
        assert_non_null(strstr(page, "room for 2 exclusive CPUs"));
        /* the hooks are empty: none of their marks */
        assert_null(strstr(page, "class=\"iso\""));
        assert_null(strstr(page, "class=\"nohz\""));
        assert_null(strstr(page, "data-pci"));
        assert_null(strstr(page, "hugepages"));
        assert_null(strstr(page, "<th>memory"));
        fx_done(&f);
}

/* The hooks, filled as the memory manager, the isolation work and the PCI list will. */
static void test_map_page_hooks(void **state)
{
        fx f;
        ncm_autoptr(ncm_map_scene) s = NULL;
        ncm_autofree char *page = NULL;

        fx_new(&f, SMALL, kubelet_full, false);
        assert_int_equal(ncm_map_scene_from_node(f.n, NULL, &s, NULL), 0);
        s->cpus[3].flags = NCM_MAP_CPU_ISOLATED | NCM_MAP_CPU_NOHZ_FULL;
        s->cpus[5].flags = NCM_MAP_CPU_NOHZ_FULL;
        s->numa[0].memory = 64ull << 30;
        s->numa[0].memory_free = 60ull << 30;
        s->numa[0].hugepages = calloc(1, sizeof(*s->numa[0].hugepages));
        assert_non_null(s->numa[0].hugepages);
        s->numa[0].hugepages[0] = (ncm_map_hugepages){2048, 512, 100};
        s->numa[0].n_hugepages = 1;
        s->pci = calloc(2, sizeof(*s->pci));
        assert_non_null(s->pci);
        s->pci[0] = (ncm_map_pci){strdup("0000:3b:00.0"), strdup("0x020000"), 1, strdup("8-15"),
                                  NULL};
        s->pci[1] = (ncm_map_pci){strdup("0000:00:1f.6"), NULL, -1, NULL, strdup("onboard NIC")};
        s->n_pci = 2;
        page = render(s, NULL);
        assert_int_equal(count(page, "class=\"iso\""), 1 + 1); /* + the legend */
        assert_int_equal(count(page, "class=\"nohz\""), 2 + 1);
        assert_non_null(strstr(page, "data-legend=\"isolated\""));
        assert_non_null(strstr(page, "data-legend=\"nohz_full\""));
        assert_non_null(strstr(page, "memory 64 GiB, 60 GiB free"));
        assert_non_null(strstr(page, "hugepages 2 MiB: 100 of 512 free"));
        assert_non_null(strstr(page, "<th>memory</th>"));
        assert_non_null(strstr(page, "data-pci=\"0000:3b:00.0\""));
        assert_non_null(strstr(page, ">3b:00.0</text>"));
        assert_non_null(strstr(page, "local CPUs 8-15"));
        assert_non_null(strstr(page, ">onboard NIC</text>"));
        assert_non_null(strstr(page, "devices without NUMA affinity"));
        fx_done(&f);
}

/* The node's PCI devices feed the hook: bridges left out, the others by class and address. */
static void test_map_scene_pci(void **state)
{
        ncm_autoptr(ncm_cpuset) local = NULL;
        ncm_pci_device devs[] = {
                        {.address = "0000:00:00.0", .class_code = 0x060000, .numa = 0},
                        {.address = "0000:3b:00.0", .class_code = 0x020000, .numa = 1},
                        {.address = "0000:3c:00.0", .class_code = -1, .numa = -1},
        };
        ncm_autoptr(ncm_map_scene) s = NULL;
        ncm_autofree char *page = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_pci *pci = NULL;
        fx f;
        (void)state;

        /* without PCI devices the hook stays empty */
        fx_new(&f, SMALL, kubelet_plain, false);
        assert_null(ncm_node_pci(f.n));
        assert_int_equal(ncm_map_scene_from_node(f.n, NULL, &s, NULL), 0);
        assert_int_equal(s->n_pci, 0);
        s = ncm_map_scene_free(s);
        ncm_node_free(f.n);

        assert_int_equal(ncm_cpuset_parse_list("8-15", &local, NULL), 0);
        devs[1].local_cpus = local;
        assert_int_equal(ncm_pci_new(devs, 3, &pci, &err), 0);
        ncm_topo_set_pci(f.t, pci);
        assert_int_equal(ncm_node_new(f.t, f.cfg, NULL, &f.n, &err), 0);
        assert_ptr_equal(ncm_node_pci(f.n), pci);
        assert_int_equal(ncm_map_scene_from_node(f.n, NULL, &s, NULL), 0);
        assert_int_equal(s->n_pci, 2);
        assert_string_equal(s->pci[0].address, "0000:3b:00.0");
        assert_string_equal(s->pci[0].class_id, "0x020000");
        assert_int_equal(s->pci[0].numa, 1);
        assert_string_equal(s->pci[0].local_cpus, "8-15");
        assert_string_equal(s->pci[0].label, "Ethernet 3b:00.0");
        assert_string_equal(s->pci[1].address, "0000:3c:00.0");
        assert_null(s->pci[1].class_id);
        assert_int_equal(s->pci[1].numa, -1);
        assert_null(s->pci[1].local_cpus);
        page = render(s, NULL);
        assert_non_null(strstr(page, "data-pci=\"0000:3b:00.0\""));
        assert_non_null(strstr(page, ">Ethernet 3b:00.0</text>"));
        assert_null(strstr(page, "data-pci=\"0000:00:00.0\""));
        assert_non_null(strstr(page, "devices without NUMA affinity"));
        fx_done(&f);
}

/* Names come from pod files: whatever they hold is text on the page, never markup. */
static void test_map_page_escapes(void **state)
{
        fx f;
        ncm_autoptr(ncm_map_scene) s = NULL;
        ncm_autofree char *page = NULL;
        ncm_map_scene_options o = {.title = "<title>", .caption = "a&b", .step = -1};

        fx_new(&f, SMALL, kubelet_full, false);
        assert_true(admit_stored(
                        &f, "{\"metadata\": {\"uid\": \"x\\\"><script>alert(1)</script>\", "
                            "\"name\": \"<img src=x onerror=alert(1)>\", \"namespace\": \"'&'\"}, "
                            "\"spec\": {\"containers\": [{\"name\": \"</svg>\", \"resources\": "
                            "{\"limits\": {\"cpu\": \"2\", \"memory\": \"1G\"}}}]}}"));
        assert_int_equal(ncm_map_scene_from_node(f.n, &o, &s, NULL), 0);
        page = render(s, NULL);
        assert_null(strstr(page, "<script>alert"));
        assert_null(strstr(page, "<img"));
        assert_int_equal(count(page, "</svg>"), 1); /* the drawing's own */
        assert_non_null(strstr(page, "&lt;img src=x onerror=alert(1)&gt;"));
        assert_non_null(strstr(page, "x&quot;&gt;&lt;script&gt;"));
        assert_non_null(strstr(page, "&#39;&amp;&#39;"));
        assert_non_null(strstr(page, "<title>nodecm map: &lt;title&gt; — a&amp;b</title>"));
        assert_int_equal(count(page, "<script>"), 1);
        fx_done(&f);
}

/* Beyond 256 CPUs each NUMA node is a tile: still every CPU, and the legend below. */
static void test_map_page_compact(void **state)
{
        fx f;
        ncm_autoptr(ncm_map_scene) s = NULL;
        ncm_autofree char *page = NULL;
        char uid[32], text[512];
        size_t admitted = 0;

        fx_new(&f, "package:2 numa:4 core:32 pu:2",
               "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0-1\"}", false);
        for (int i = 0; i < 30; i++) {
                snprintf(uid, sizeof(uid), "p%02d", i);
                snprintf(text, sizeof(text),
                         "{\"metadata\": {\"uid\": \"%s\", \"name\": \"%s\"}, \"spec\": "
                         "{\"containers\": [{\"name\": \"c\", \"resources\": {\"limits\": "
                         "{\"cpu\": \"%d\", \"memory\": \"1G\"}}}]}}",
                         uid, uid, 2 + i % 5);
                admitted += admit(&f, NULL, text);
        }
        assert_int_equal(admitted, 30);
        assert_int_equal(ncm_map_scene_from_node(f.n, NULL, &s, NULL), 0);
        assert_int_equal(s->n_cpus, 512);
        page = render(s, NULL);
        assert_non_null(strstr(page, "<svg id=\"map\" class=\"compact\""));
        assert_int_equal(count(page, "data-cpu=\""), 512);
        assert_int_equal(count(page, "data-numa=\""), 8);
        assert_int_equal(count(page, "data-socket=\""), 2);
        assert_non_null(strstr(page, "30 pods hold CPUs or devices"));
        assert_int_equal(count(page, "<a href=\"#pod-"), 30 + 120 /* legend + CPUs */);
        fx_done(&f);
}

static void test_map_page_steps(void **state)
{
        fx f;
        ncm_autoptr(ncm_map_history) h = ncm_map_history_new();
        ncm_autoptr(ncm_map_scene) s = NULL;
        ncm_autoptr(ncm_map_scene) end = NULL;
        ncm_autofree char *page = NULL;
        ncm_autofree char *last = NULL;
        ncm_map_scene_options o = {.history = h, .step = 3};
        ncm_map_html_options ho = {.step_links = true,
                                   .n_steps_total = 300,
                                   .generated = "now",
                                   .events_url = "/map/events"};

        fx_new(&f, SMALL, kubelet_full, false);
        for (size_t i = 0; i < 250; i++)
                assert_int_equal(ncm_map_history_step(h, i, "admit <x>"), 0);
        assert_int_equal(ncm_map_scene_from_node(f.n, &o, &s, NULL), 0);
        page = render(s, &ho);
        assert_non_null(strstr(page, "… 50 earlier steps"));
        assert_int_equal(count(page, "<li value="), 200);
        assert_non_null(strstr(page, "<a rel=\"prev\" href=\"step-0002.html\">"));
        assert_non_null(strstr(page, "<a rel=\"next\" href=\"step-0004.html\">"));
        assert_non_null(strstr(page, "<a href=\"step-0249.html\">admit &lt;x&gt;</a>"));
        assert_non_null(strstr(page, "<p class=\"gen\">now · live"));
        assert_non_null(strstr(page, "new EventSource('/map/events')"));
        o.step = -1;
        assert_int_equal(ncm_map_scene_from_node(f.n, &o, &end, NULL), 0);
        last = render(end, &ho);
        assert_non_null(strstr(last, "<a href=\"step-0299.html\">last step (299)</a>"));
        fx_done(&f);
}

/* A node restored from a checkpoint knows pods by their entries only. */
static void test_map_checkpoint_only_pods(void **state)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_node_options o = {0};
        ncm_autoptr(ncm_map_scene) s = NULL;
        ncm_autofree char *page = NULL;
        ncm_buf cp = NCM_BUF_INIT;
        ncm_node *restored = NULL;
        fx f;

        /* the checkpoint of a node that admitted a pod, read by a node that never saw it */
        fx_new(&f, SMALL, kubelet_plain, false);
        assert_true(admit(&f, NULL, web_pod));
        assert_true(admit(&f, NULL,
                          "{\"metadata\": {\"uid\": \"ghost\"}, \"spec\": {\"containers\": "
                          "[{\"name\": \"c\", \"resources\": {\"limits\": {\"cpu\": \"2\", "
                          "\"memory\": \"1G\"}}}]}}"));
        ncm_node_format_cpu_checkpoint(f.n, &cp);
        o.cpu_checkpoint = cp.data;
        o.cpu_checkpoint_len = cp.len;
        o.cpu_checkpoint_name = "state";
        assert_int_equal(ncm_node_new(f.t, f.cfg, &o, &restored, &err), 0);
        assert_int_equal(ncm_map_scene_from_node(restored, NULL, &s, NULL), 0);
        assert_int_equal(s->n_pods, 1);
        assert_string_equal(s->pods[0].uid, "ghost");
        assert_string_equal(s->pods[0].name, "");
        assert_null(s->pods[0].qos);
        assert_int_equal(s->pods[0].exclusive_cpus, 2);
        page = render(s, NULL);
        assert_non_null(strstr(page, "known from the checkpoint only"));
        assert_int_equal(count(page, "data-holder=\"ghost/c\""), 2);
        ncm_node_free(restored);
        ncm_buf_done(&cp);
        fx_done(&f);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_map_scene_uses_and_room),
                        cmocka_unit_test(test_map_scene_room_without_full_pcpus),
                        cmocka_unit_test(test_map_scene_none_policy),
                        cmocka_unit_test(test_map_isolation_marks),
                        cmocka_unit_test(test_map_explanations),
                        cmocka_unit_test(test_map_explain_pod),
                        cmocka_unit_test(test_map_explanation_cut),
                        cmocka_unit_test(test_map_page_small),
                        cmocka_unit_test(test_map_page_hooks),
                        cmocka_unit_test(test_map_scene_pci),
                        cmocka_unit_test(test_map_page_escapes),
                        cmocka_unit_test(test_map_page_compact),
                        cmocka_unit_test(test_map_page_steps),
                        cmocka_unit_test(test_map_checkpoint_only_pods),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
