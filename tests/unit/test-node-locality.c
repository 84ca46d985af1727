/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Device locality in the node: the configuration's fields and their errors, and the locator on
 * issue 24's fake machine (tests/data/topologies/fakepci-2s4r: CDI specs in /etc/cdi and
 * /var/run/cdi, /sys/dev links, a VFIO group): CDI devices by their device nodes, by a name
 * that is a PCI address, by devicePCI; a plugin's devices by their ids or together through
 * their Allocate answer; what cannot be located, and why.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/sysmacros.h>

#include <nodecm/devicemanager.h>
#include <nodecm/fs.h>
#include <nodecm/node-config.h>
#include <nodecm/node.h>
#include <nodecm/topology.h>
#include "testutil.h"

typedef struct fixture {
        char *tmp, *root;
        ncm_topo *t;
} fixture;

static int setup(void **state)
{
        fixture *f = calloc(1, sizeof(*f));
        ncm_error err = NCM_ERROR_INIT;
        f->root = tu_extract_topology("fakepci-2s4r", &f->tmp);
        if (ncm_topo_load(NCM_TOPO_SOURCE_FSROOT, f->root, &f->t, &err) < 0)
                fail_msg("%s", err.msg);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        fixture *f = *state;
        ncm_topo_free(f->t);
        tu_rm_rf(f->tmp);
        free(f->tmp);
        free(f->root);
        free(f);
        return 0;
}

static ncm_node_config *config(const char *text)
{
        ncm_node_config *c = NULL;
        ncm_error err = NCM_ERROR_INIT;
        if (ncm_node_config_parse(text, strlen(text), "config", "", &c, &err) < 0)
                fail_msg("%s: %s", text, err.msg);
        return c;
}

static void expect_config_error(const char *text, const char *what)
{
        ncm_node_config *c = NULL;
        ncm_error err = NCM_ERROR_INIT;
        int r = ncm_node_config_parse(text, strlen(text), "config", "node.kubelet", &c, &err);
        if (r != -EINVAL || !strstr(err.msg, what))
                fail_msg("%s: expected an error naming \"%s\", got %d \"%s\"", text, what, r,
                         err.msg);
        assert_null(c);
}

static void test_node_locality_config(void **state)
{
        ncm_autoptr(ncm_node_config) off = config("{}");
        ncm_autoptr(ncm_node_config) on = config(
                        "{\"deviceLocalCPUs\": \"prefer\", \"draTopologyHints\": \"align\", "
                        "\"cdiSpecDirs\": [\"/opt/cdi\"], \"devicePCI\": "
                        "{\"example.com/nic=eth0\": "
                        "\"3B:00.0\", \"vendor.com/gpu=g0\": [\"0000:41:00.0\", \"41:00.1\"]}}");
        const char *const *v;
        size_t n = 0;
        (void)state;

        assert_false(ncm_node_config_device_local_cpus(off));
        assert_false(ncm_node_config_dra_hints(off));
        assert_null(ncm_node_config_cdi_dirs(off, &n));
        assert_true(ncm_node_config_device_local_cpus(on));
        assert_true(ncm_node_config_dra_hints(on));
        v = ncm_node_config_cdi_dirs(on, &n);
        assert_int_equal(n, 1);
        assert_string_equal(v[0], "/opt/cdi");
        v = ncm_node_config_device_pci(on, "example.com/nic=eth0", &n);
        assert_int_equal(n, 1);
        assert_string_equal(v[0], "0000:3b:00.0");
        v = ncm_node_config_device_pci(on, "vendor.com/gpu=g0", &n);
        assert_int_equal(n, 2);
        assert_string_equal(v[1], "0000:41:00.1");
        assert_null(ncm_node_config_device_pci(on, "vendor.com/gpu=g1", &n));

        expect_config_error(
                        "{\"deviceLocalCPUs\": \"yes\"}",
                        "node.kubelet.deviceLocalCPUs: unknown value \"yes\" (ignore or prefer)");
        expect_config_error("{\"draTopologyHints\": true}",
                            "node.kubelet.draTopologyHints: expected string, got boolean");
        expect_config_error("{\"cdiSpecDirs\": \"/etc/cdi\"}",
                            "node.kubelet.cdiSpecDirs: expected array, got string");
        expect_config_error("{\"cdiSpecDirs\": [\"cdi\"]}",
                            "node.kubelet.cdiSpecDirs[0]: expected an absolute path");
        expect_config_error("{\"devicePCI\": []}", "node.kubelet.devicePCI: expected object");
        expect_config_error("{\"devicePCI\": {\"eth0\": \"3b:00.0\"}}",
                            "node.kubelet.devicePCI[eth0]: not a device (RESOURCE=ID, or a CDI "
                            "name)");
        expect_config_error("{\"devicePCI\": {\"a/b=c\": \"3b:00\"}}",
                            "node.kubelet.devicePCI[a/b=c]: \"3b:00\" is not a PCI address");
        expect_config_error("{\"devicePCI\": {\"a/b=c\": []}}",
                            "node.kubelet.devicePCI[a/b=c]: 1 to 64 PCI addresses");
        expect_config_error("{\"devicePCI\": {\"a/b=c\": 7}}",
                            "node.kubelet.devicePCI[a/b=c]: expected a PCI address or a list");
        /* a near miss is a typo, as for the kubelet's own fields */
        expect_config_error("{\"deviceLocalCPU\": \"prefer\"}", "deviceLocalCPUs");
}

static ncm_locator *locator(const fixture *f, const ncm_node_config *c)
{
        ncm_locator *l = NULL;
        ncm_error err = NCM_ERROR_INIT;
        assert_int_equal(ncm_locator_new(f->t, c, f->root, &l, &err), 0);
        return l;
}

static void expect_cdi(ncm_locator *l, const char *name, const char *pci, const char *numa,
                       const char *local, const char *how)
{
        ncm_device_location d = {0};
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf b = NCM_BUF_INIT;

        if (ncm_locator_cdi(l, name, &d, &err) < 0)
                fail_msg("%s: %s", name, err.msg);
        assert_string_equal(d.device, name);
        if (!pci) {
                assert_false(d.located);
                if (!strstr(d.how, how))
                        fail_msg("%s: \"%s\" does not say \"%s\"", name, d.how, how);
                ncm_device_location_done(&d);
                return;
        }
        assert_true(d.located);
        assert_int_equal(d.n_pci, 1);
        assert_string_equal(d.pci[0], pci);
        if (!strstr(d.how, how))
                fail_msg("%s: \"%s\" does not say \"%s\"", name, d.how, how);
        ncm_bitmask_format_ids(d.numa, &b);
        assert_string_equal(b.data ? b.data : "", numa);
        ncm_buf_done(&b);
        if (local)
                tu_assert_cpuset(d.local_cpus, local);
        else
                assert_null(d.local_cpus);
        ncm_device_location_done(&d);
}

static void test_node_locality_cdi(void **state)
{
        fixture *f = *state;
        ncm_autoptr(ncm_node_config) c =
                        config("{\"devicePCI\": {\"example.com/gpu=gpu0\": \"0000:c1:00.0\"}}");
        ncm_autoptr(ncm_locator) l = locator(f, c);

        /* a device node's major:minor, traced through /sys/dev/char */
        expect_cdi(l, "example.com/gpu=gpu1", "0000:81:00.0", "1", "8-11,24-27",
                   "CDI /etc/cdi/example-gpu.yaml: /dev/dri/renderD129");
        /* a VFIO group's node: the IOMMU group's function (a JSON spec in /var/run/cdi) */
        expect_cdi(l, "example.com/nic=vf2", "0000:c1:00.2", "1", "12-15,28-31",
                   "CDI /var/run/cdi/example-nic.json: /dev/vfio/40");
        expect_cdi(l, "example.com/nic=pf", "0000:c1:00.0", "1", "12-15,28-31", "uverbs0");
        /* the operator's word first */
        expect_cdi(l, "example.com/gpu=gpu0", "0000:c1:00.0", "1", "12-15,28-31", "devicePCI");
        /* a name that is a PCI address, spec or not */
        expect_cdi(l, "vendor.com/nic=0000:40:01.0", "0000:40:01.0", "0", "4-7,20-23", "CDI name");
        /* what cannot be located, and why */
        expect_cdi(l, "example.com/gpu=common", NULL, NULL, NULL,
                   "CDI /etc/cdi/example-gpu.yaml: no device node");
        expect_cdi(l, "example.com/gpu=gpu9", NULL, NULL, NULL, "no CDI spec defines it");
}

static void test_node_locality_cdi_errors(void **state)
{
        fixture *f = *state;
        ncm_autoptr(ncm_node_config) none = config("{\"cdiSpecDirs\": []}");
        ncm_autoptr(ncm_node_config) dflt = config("{}");
        ncm_autoptr(ncm_locator) l = locator(f, none);
        ncm_autoptr(ncm_locator) m = NULL;
        char p[1024];

        /* no spec directory at all */
        expect_cdi(l, "example.com/gpu=gpu1", NULL, NULL, NULL, "no CDI spec defines it");
        /* a spec whose node is no PCI function's */
        snprintf(p, sizeof(p), "%s/etc/cdi/tun.yaml", f->root);
        tu_write_file(p, "cdiVersion: 0.6.0\nkind: v.com/tun\ndevices:\n- name: t0\n"
                         "  containerEdits: {deviceNodes: [{path: /dev/net/tun, type: c, "
                         "major: 10, minor: 200}]}\n");
        m = locator(f, dflt);
        expect_cdi(m, "v.com/tun=t0", NULL, NULL, NULL,
                   "CDI /etc/cdi/tun.yaml: /sys/dev/char/10:200: no such device link");
        /* a spec read again after a refresh: the driver wrote a new claim's */
        snprintf(p, sizeof(p), "%s/var/run/cdi/claim.yaml", f->root);
        tu_write_file(p, "cdiVersion: 0.6.0\nkind: v.com/gpu\ndevices:\n- name: claim-1\n"
                         "  containerEdits: {deviceNodes: [{path: /dev/dri/renderD128, type: c, "
                         "major: 226, minor: 128}]}\n");
        expect_cdi(m, "v.com/gpu=claim-1", NULL, NULL, NULL, "no CDI spec defines it");
        ncm_locator_refresh(m);
        expect_cdi(m, "v.com/gpu=claim-1", "0000:41:00.0", "0", "4-7,20-23",
                   "CDI /var/run/cdi/claim.yaml");
        /* unchanged spec files: the same registry after a refresh, once their times settle */
        {
                struct timespec ts = {0, 30 * 1000 * 1000};
                while (nanosleep(&ts, &ts) < 0)
                        ;
                ncm_locator_refresh(m);
                const ncm_cdi_registry *r1 = NULL, *r2 = NULL;
                ncm_error err = NCM_ERROR_INIT;
                assert_int_equal(ncm_locator_registry(m, &r1, &err), 0);
                ncm_locator_refresh(m);
                assert_int_equal(ncm_locator_registry(m, &r2, &err), 0);
                assert_ptr_equal(r1, r2);
        }
        /* the claim's spec rewritten for another device, same name, same size */
        tu_write_file(p, "cdiVersion: 0.6.0\nkind: v.com/gpu\ndevices:\n- name: claim-1\n"
                         "  containerEdits: {deviceNodes: [{path: /dev/dri/renderD129, type: c, "
                         "major: 226, minor: 129}]}\n");
        expect_cdi(m, "v.com/gpu=claim-1", "0000:41:00.0", "0", "4-7,20-23",
                   "CDI /var/run/cdi/claim.yaml");
        ncm_locator_refresh(m);
        expect_cdi(m, "v.com/gpu=claim-1", "0000:81:00.0", "1", "8-11,24-27",
                   "CDI /var/run/cdi/claim.yaml");
}

static void test_node_locality_plugin(void **state)
{
        fixture *f = *state;
        ncm_autoptr(ncm_node_config) c =
                        config("{\"devicePCI\": {\"example.com/nic=eth3\": \"c1:00.3\"}}");
        ncm_autoptr(ncm_locator) l = locator(f, c);
        ncm_autoptr(ncm_devmgr_alloc_resp) resp = ncm_devmgr_alloc_resp_new();
        static const char *const ids[] = {"0000:c1:00.2", "eth3", "x", "y"};
        ncm_device_location *v = NULL;
        ncm_buf b = NCM_BUF_INIT;
        ncm_error err = NCM_ERROR_INIT;
        size_t n = 0;

        /* ids that are PCI addresses, devicePCI, and the rest through the answer's CDI device */
        assert_int_equal(ncm_devmgr_alloc_resp_add_cdi_device(resp, "example.com/gpu=gpu1"), 0);
        assert_int_equal(ncm_locator_plugin(l, "example.com/nic", ids, 4, resp, &v, &n, &err), 0);
        assert_int_equal(n, 3);
        assert_string_equal(v[0].device, "example.com/nic=0000:c1:00.2");
        assert_string_equal(v[0].how, "device ID");
        assert_string_equal(v[1].device, "example.com/nic=eth3");
        assert_string_equal(v[1].pci[0], "0000:c1:00.3");
        assert_string_equal(v[2].device, "example.com/nic=x,y");
        assert_string_equal(v[2].pci[0], "0000:81:00.0");
        assert_string_equal(v[2].how, "its CDI /etc/cdi/example-gpu.yaml: /dev/dri/renderD129");

        ncm_device_locations_text(v, n, &b);
        assert_string_equal(b.data,
                            "  example.com/nic=0000:c1:00.2: PCI 0000:c1:00.2 (NUMA 1, local CPUs "
                            "12-15,28-31) by device ID\n"
                            "  example.com/nic=eth3: PCI 0000:c1:00.3 (NUMA 1, local CPUs "
                            "12-15,28-31) by devicePCI\n"
                            "  example.com/nic=x,y: PCI 0000:81:00.0 (NUMA 1, local CPUs "
                            "8-11,24-27) by its CDI /etc/cdi/example-gpu.yaml: "
                            "/dev/dri/renderD129\n");
        ncm_buf_reset(&b);
        ncm_device_locations_json(v, 1, &b);
        assert_string_equal(b.data, "[{\"device\": \"example.com/nic=0000:c1:00.2\", \"located\": "
                                    "true, \"how\": \"device ID\", \"pci\": [\"0000:c1:00.2\"], "
                                    "\"numa\": [1], \"local_cpus\": \"12-15,28-31\"}]");
        ncm_buf_done(&b);
        ncm_device_locations_free(v, n);

        /* nothing to go by */
        assert_int_equal(ncm_locator_plugin(l, "example.com/nic", ids + 2, 2, NULL, &v, &n, &err),
                         0);
        assert_int_equal(n, 2);
        assert_false(v[1].located);
        assert_string_equal(v[1].how, "no PCI address in its id, devicePCI or its Allocate answer");
        ncm_device_locations_free(v, n);
}

static void test_node_locality_device_nodes(void **state)
{
        fixture *f = *state;
        ncm_autoptr(ncm_node_config) c = config("{}");
        ncm_autoptr(ncm_locator) l = locator(f, c);
        ncm_autoptr(ncm_devmgr_alloc_resp) resp = ncm_devmgr_alloc_resp_new();
        static const char *const ids[] = {"ib0"};
        ncm_device_location *v = NULL;
        ncm_error err = NCM_ERROR_INIT;
        size_t n = 0;
        char p[1024];

        snprintf(p, sizeof(p), "%s/dev", f->root);
        (void)mkdir(p, 0755);
        snprintf(p, sizeof(p), "%s/dev/uverbs0", f->root);
        if (mknod(p, S_IFCHR | 0600, makedev(231, 192)) < 0)
                skip(); /* mknod needs CAP_MKNOD */
        assert_int_equal(ncm_devmgr_alloc_resp_add_device(resp, "/dev/infiniband/uverbs0",
                                                          "/dev/uverbs0", "rw"),
                         0);
        assert_int_equal(ncm_locator_plugin(l, "rdma/ib", ids, 1, resp, &v, &n, &err), 0);
        assert_int_equal(n, 1);
        assert_true(v[0].located);
        assert_string_equal(v[0].pci[0], "0000:c1:00.0");
        assert_string_equal(v[0].how, "device node /dev/uverbs0");
        ncm_device_locations_free(v, n);
}

static void test_node_locality_pci_from_topology(void **state)
{
        static const char text[] =
                        "{\"cpus\": [{\"cpu\": 0, \"core\": 0, \"socket\": 0, \"numa\": 0, "
                        "\"uncore\": 0}, {\"cpu\": 1, \"core\": 1, \"socket\": 0, \"numa\": 0, "
                        "\"uncore\": 0}],\n \"pci\": [{\"address\": \"0000:3b:00.0\", \"numa\": 0, "
                        "\"local_cpus\": \"1,5\"}]}";
        ncm_autoptr(ncm_topo) t = NULL;
        ncm_autoptr(ncm_node_config) c = config("{\"cdiSpecDirs\": []}");
        ncm_locator *l = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_device_location d = {0};
        (void)state;

        /* the table carries its PCI devices: no machine is read (the root does not exist) */
        assert_int_equal(ncm_topo_parse_json(text, strlen(text), "t", &t, &err), 0);
        assert_int_equal(ncm_locator_new(t, c, "/nonexistent-nodecm-root", &l, &err), 0);
        assert_int_equal(ncm_locator_cdi(l, "v.com/nic=0000:3b:00.0", &d, &err), -ENOENT);
        ncm_locator_free(l);
        /* local CPUs the machine does not have are left out */
        assert_int_equal(ncm_locator_new(t, c, "/", &l, &err), 0);
        assert_int_equal(ncm_locator_cdi(l, "v.com/nic=0000:3b:00.0", &d, &err), 0);
        assert_true(d.located);
        tu_assert_cpuset(d.local_cpus, "1");
        ncm_device_location_done(&d);
        ncm_locator_free(l);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_node_locality_config),
                        cmocka_unit_test_setup_teardown(test_node_locality_cdi, setup, teardown),
                        cmocka_unit_test_setup_teardown(test_node_locality_cdi_errors, setup,
                                                        teardown),
                        cmocka_unit_test_setup_teardown(test_node_locality_plugin, setup, teardown),
                        cmocka_unit_test_setup_teardown(test_node_locality_device_nodes, setup,
                                                        teardown),
                        cmocka_unit_test(test_node_locality_pci_from_topology),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
