/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PCI devices: addresses and sysfs values, discovery on the fake machines of
 * tests/data/topologies (fakepci-*, built by make-fake.py) and on hand-broken copies, the JSON
 * form and its reader's errors, the tree for people, and device nodes traced to functions.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <nodecm/fs.h>
#include <nodecm/topology.h>
#include "base/json.h"
#include "testutil.h"
#include "topology/topology-internal.h"

/* ------------------------------------------------------------------------------------------
 * Pure parts
 */

static void test_topology_pci_parse_address(void **state)
{
        static const struct {
                const char *in, *out;
        } ok[] = {
                        {"0000:3b:00.0", "0000:3b:00.0"},
                        {"3B:00.7", "0000:3b:00.7"},
                        {"0000:00:1f.2", "0000:00:1f.2"},
                        {"10000:e0:06.0", "10000:e0:06.0"},
                        {"ffffffff:ff:1f.7", "ffffffff:ff:1f.7"},
                        {"1:02:03.4", "0001:02:03.4"},
        };
        static const char *const bad[] = {
                        "",
                        "x",
                        "0000:3b:00",
                        "0000:3b:20.0",
                        "0000:3b:00.8",
                        "0000:3b:0.0",
                        "0000:3b:00.0x",
                        "000000000:00:00.0",
                        "0000:3b:00:0",
                        ":3b:00.0",
                        "0000::00.0",
                        "0000:3b:00.",
                        "pci0000:3b",
                        "0000-3b-00.0",
        };
        char out[NCM_PCI_ADDRESS_MAX];
        (void)state;

        for (size_t i = 0; i < NCM_ELEMENTSOF(ok); i++) {
                assert_int_equal(ncm_pci_parse_address(ok[i].in, out), 0);
                assert_string_equal(out, ok[i].out);
        }
        for (size_t i = 0; i < NCM_ELEMENTSOF(bad); i++)
                if (ncm_pci_parse_address(bad[i], out) != -EINVAL)
                        fail_msg("'%s' parsed", bad[i]);
        assert_int_equal(ncm_pci_parse_address(NULL, out), -EINVAL);
}

static void test_topology_pci_parse_hex(void **state)
{
        int64_t v = -1;
        (void)state;

        assert_int_equal(ncm__pci_parse_hex("0x020000\n", 0xffffff, &v), 0);
        assert_int_equal(v, 0x020000);
        assert_int_equal(ncm__pci_parse_hex("0X15B3", 0xffff, &v), 0);
        assert_int_equal(v, 0x15b3);
        assert_int_equal(ncm__pci_parse_hex("0x1ffffff\n", 0xffffff, &v), -ERANGE);
        assert_int_equal(ncm__pci_parse_hex("0x123456789", INT64_MAX, &v), -ERANGE);
        assert_int_equal(ncm__pci_parse_hex("0x", 0xffff, &v), -EINVAL);
        assert_int_equal(ncm__pci_parse_hex("15b3", 0xffff, &v), -EINVAL);
        assert_int_equal(ncm__pci_parse_hex("0x15b3 x", 0xffff, &v), -EINVAL);
        assert_int_equal(ncm__pci_parse_hex("", 0xffff, &v), -EINVAL);
        assert_int_equal(ncm__pci_parse_hex("0x-1", 0xffff, &v), -EINVAL);
}

static void test_topology_pci_path_chain(void **state)
{
        char addr[NCM_PCI_ADDRESS_MAX], *root = NULL, **br = NULL;
        size_t nb = 0;
        (void)state;

        assert_int_equal(ncm__pci_path_chain("../../../devices/pci0000:3a/0000:3a:00.0/"
                                             "0000:3b:00.0",
                                             addr, true, &root, &br, &nb),
                         1);
        assert_string_equal(addr, "0000:3b:00.0");
        assert_string_equal(root, "pci0000:3a");
        assert_int_equal(nb, 1);
        assert_string_equal(br[0], "0000:3a:00.0");
        free(root);
        ncm_pci_strv_free(br, nb);

        /* a device node's path: the function is the last address in it */
        assert_int_equal(ncm__pci_path_chain("/sys/devices/pci0000:00/0000:00:02.0/virtio1/block/"
                                             "vda",
                                             addr, false, NULL, NULL, NULL),
                         1);
        assert_string_equal(addr, "0000:00:02.0");
        /* Intel VMD: a nested root; the first is the root, the VMD function a bridge */
        assert_int_equal(ncm__pci_path_chain("/sys/devices/pci0000:00/0000:00:0e.0/pci10000:e0/"
                                             "10000:e0:06.0/10000:e1:00.0/nvme/nvme0",
                                             addr, true, &root, &br, &nb),
                         1);
        assert_string_equal(addr, "10000:e1:00.0");
        assert_string_equal(root, "pci0000:00");
        assert_int_equal(nb, 2);
        assert_string_equal(br[1], "10000:e0:06.0");
        free(root);
        ncm_pci_strv_free(br, nb);
        assert_int_equal(ncm__pci_path_chain("/sys/devices/virtual/misc/tun", addr, false, NULL,
                                             NULL, NULL),
                         0);
        assert_int_equal(ncm__pci_path_chain("", addr, false, NULL, NULL, NULL), 0);
}

static void test_topology_pci_parse_uevent(void **state)
{
        int64_t c = 0;
        int32_t v = 0, d = 0;
        (void)state;

        assert_int_equal(ncm__pci_parse_uevent("DRIVER=virtio-pci\nPCI_CLASS=20000\nPCI_ID="
                                               "1AF4:1041\nPCI_SLOT_NAME=0000:00:03.0\n",
                                               &c, &v, &d),
                         0);
        assert_int_equal(c, 0x020000);
        assert_int_equal(v, 0x1af4);
        assert_int_equal(d, 0x1041);
        assert_int_equal(ncm__pci_parse_uevent("PCI_CLASS=20000\n", &c, &v, &d), -ENOENT);
        assert_int_equal(ncm__pci_parse_uevent("", &c, &v, &d), -ENOENT);
        assert_int_equal(ncm__pci_parse_uevent("PCI_CLASS=2000000\nPCI_ID=1AF4:1041", &c, &v, &d),
                         -EINVAL);
        assert_int_equal(ncm__pci_parse_uevent("PCI_CLASS=20000\nPCI_ID=1AF4-1041", &c, &v, &d),
                         -EINVAL);
        assert_int_equal(ncm__pci_parse_uevent("PCI_CLASS=x\nPCI_ID=1AF4:1041", &c, &v, &d),
                         -EINVAL);
}

static void test_topology_pci_class_names(void **state)
{
        (void)state;
        assert_string_equal(ncm_pci_class_name(0x020000), "Ethernet");
        assert_string_equal(ncm_pci_class_name(0x010802), "NVMe");
        assert_string_equal(ncm_pci_class_name(0x030200), "3D");
        assert_string_equal(ncm_pci_class_name(0x120000), "Accelerator");
        assert_string_equal(ncm_pci_class_name(0x028000), "Network");
        assert_string_equal(ncm_pci_class_name(0xff0000), "Other");
        assert_string_equal(ncm_pci_class_name(-1), "unknown class");
}

/* ------------------------------------------------------------------------------------------
 * Discovery
 */

typedef struct fixture {
        char *tmp, *root;
        int fd;
} fixture;

static int setup_2s4r(void **state)
{
        fixture *f = calloc(1, sizeof(*f));
        f->root = tu_extract_topology("fakepci-2s4r", &f->tmp);
        f->fd = ncm_fs_open_root(f->root, NULL);
        assert_true(f->fd >= 0);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        fixture *f = *state;
        close(f->fd);
        tu_rm_rf(f->tmp);
        free(f->tmp);
        free(f->root);
        free(f);
        return 0;
}

static char *at(const fixture *f, const char *rel)
{
        char *p;
        if (asprintf(&p, "%s%s", f->root, rel) < 0)
                fail_msg("out of memory");
        return p;
}

static void put(const fixture *f, const char *rel, const char *text)
{
        char *p = at(f, rel);
        (void)unlink(p);
        tu_write_file(p, text);
        free(p);
}

static ncm_pci *discover_ok(const fixture *f)
{
        ncm_pci *p = NULL;
        ncm_error err = NCM_ERROR_INIT;
        if (ncm_pci_discover_sysfs(f->fd, &p, &err) < 0)
                fail_msg("discovery failed: %s", err.msg);
        return p;
}

static void expect_fail(const fixture *f, int code, const char *what)
{
        ncm_pci *p = NULL;
        ncm_error err = NCM_ERROR_INIT;
        int r = ncm_pci_discover_sysfs(f->fd, &p, &err);
        if (r != -code || !strstr(err.msg, what) || strchr(err.msg, '\n'))
                fail_msg("expected -%d naming \"%s\", got %d \"%s\"", code, what, r, err.msg);
        assert_null(p);
}

static void test_topology_pci_discover_fake(void **state)
{
        fixture *f = *state;
        ncm_autoptr(ncm_pci) p = discover_ok(f);
        const ncm_pci_device *d;
        size_t n;

        ncm_pci_devices(p, &n);
        assert_int_equal(n, 11);
        d = ncm_pci_find(p, "c1:00.0");
        assert_non_null(d);
        assert_string_equal(d->address, "0000:c1:00.0");
        assert_int_equal(d->class_code, 0x020000);
        assert_int_equal(d->vendor, 0x15b3);
        assert_int_equal(d->device, 0x1017);
        assert_int_equal(d->numa, 1);
        tu_assert_cpuset(d->local_cpus, "12-15,28-31");
        assert_string_equal(d->root, "pci0000:c0");
        assert_int_equal(d->n_bridges, 1);
        assert_string_equal(d->bridges[0], "0000:c0:01.0");
        d = ncm_pci_find(p, "0000:c0:01.0");
        assert_non_null(d);
        assert_int_equal(d->n_bridges, 0);
        assert_null(ncm_pci_find(p, "0000:c2:00.0"));
        assert_null(ncm_pci_find(p, "junk"));
        /* sorted by address */
        d = ncm_pci_devices(p, &n);
        for (size_t i = 1; i < n; i++)
                assert_true(strcmp(d[i - 1].address, d[i].address) < 0);
}

static void test_topology_pci_discover_lenient(void **state)
{
        fixture *f = *state;
        char *p;
        ncm_autoptr(ncm_pci) t = NULL;
        const ncm_pci_device *d;

        /* missing files leave their fields unknown; the list is the fallback of the mask, the
         * class, vendor and device files that of uevent; the locality is the root's first
         * function's (c0:01.0 for c1:00.0, as lstopo's host bridge takes it) */
        p = at(f, "/sys/devices/pci0000:c0/0000:c0:01.0/0000:c1:00.0/uevent");
        unlink(p);
        free(p);
        p = at(f, "/sys/devices/pci0000:c0/0000:c0:01.0/0000:c1:00.0/vendor");
        unlink(p);
        free(p);
        p = at(f, "/sys/devices/pci0000:c0/0000:c0:01.0/numa_node");
        unlink(p);
        free(p);
        p = at(f, "/sys/devices/pci0000:c0/0000:c0:01.0/local_cpus");
        unlink(p);
        free(p);
        put(f, "/sys/devices/pci0000:c0/0000:c0:01.0/local_cpulist", "13\n");
        /* hwloc's reader takes "0x" words, and an entry that is no address is ignored */
        put(f, "/sys/devices/pci0000:80/0000:80:01.0/local_cpus", "0x0,0x100\n");
        put(f, "/sys/bus/pci/devices/README", "not a device\n");
        t = discover_ok(f);
        d = ncm_pci_find(t, "0000:c1:00.0");
        assert_int_equal(d->vendor, -1);
        assert_int_equal(d->device, 0x1017);
        assert_int_equal(d->numa, -1);
        tu_assert_cpuset(d->local_cpus, "13");
        d = ncm_pci_find(t, "0000:c0:01.0");
        assert_int_equal(d->numa, -1);
        tu_assert_cpuset(d->local_cpus, "13");
        d = ncm_pci_find(t, "0000:81:00.0");
        tu_assert_cpuset(d->local_cpus, "8");
}

static void test_topology_pci_discover_per_root(void **state)
{
        fixture *f = *state;
        ncm_autoptr(ncm_pci) t = NULL;
        const ncm_pci_device *d;

        /* a function's own numa_node and local CPUs below a root are not read: on a kernel
         * they are its bus's, and where a hand-made tree says otherwise lstopo shows the
         * root's first function's; so does nodecm, even where the function's files would not
         * parse */
        put(f, "/sys/devices/pci0000:c0/0000:c0:01.0/0000:c1:00.2/numa_node", "0\n");
        put(f, "/sys/devices/pci0000:c0/0000:c0:01.0/0000:c1:00.2/local_cpus", "00000001\n");
        put(f, "/sys/devices/pci0000:c0/0000:c0:01.0/0000:c1:00.3/numa_node", "one\n");
        put(f, "/sys/devices/pci0000:c0/0000:c0:01.0/0000:c1:00.3/local_cpus", "zz\n");
        t = discover_ok(f);
        for (const char *const *a = (const char *const[]){"c1:00.0", "c1:00.2", "c1:00.3", NULL};
             *a; a++) {
                d = ncm_pci_find(t, *a);
                assert_non_null(d);
                assert_int_equal(d->numa, 1);
                tu_assert_cpuset(d->local_cpus, "12-15,28-31");
        }
        ncm_pci_free(t);
        /* the first function is the lowest address, whatever order the directory lists */
        put(f, "/sys/devices/pci0000:c0/0000:c0:01.0/numa_node", "0\n");
        put(f, "/sys/devices/pci0000:c0/0000:c0:01.0/local_cpus", "00000003\n");
        t = discover_ok(f);
        d = ncm_pci_find(t, "c1:00.3");
        assert_int_equal(d->numa, 0);
        tu_assert_cpuset(d->local_cpus, "0-1");
        /* another root keeps its own */
        d = ncm_pci_find(t, "81:00.0");
        assert_int_equal(d->numa, 1);
}

static void test_topology_pci_discover_broken_bridge(void **state)
{
        fixture *f = *state;
        char *p = at(f, "/sys/devices/pci0000:40/0000:40:01.0/config");
        unsigned char cfg[64] = {0};
        FILE *fp;
        ncm_autoptr(ncm_pci) t = NULL;
        size_t n;

        /* a type-1 header with secondary and subordinate bus 00: lstopo drops it */
        cfg[0x0e] = 1;
        cfg[0x18] = 0x40;
        fp = fopen(p, "w");
        assert_non_null(fp);
        assert_int_equal(fwrite(cfg, 1, sizeof(cfg), fp), sizeof(cfg));
        fclose(fp);
        free(p);
        t = discover_ok(f);
        ncm_pci_devices(t, &n);
        assert_int_equal(n, 10);
        assert_null(ncm_pci_find(t, "0000:40:01.0"));
        /* its device stays, with the chain the kernel shows, and is the root's first function
         * now (lstopo hangs it under a host bridge of its own, located by its own files) */
        assert_non_null(ncm_pci_find(t, "0000:41:00.0"));
        ncm_pci_free(t);
        put(f, "/sys/devices/pci0000:40/0000:40:01.0/0000:41:00.0/numa_node", "1\n");
        t = discover_ok(f);
        assert_int_equal(ncm_pci_find(t, "0000:41:00.0")->numa, 1);
}

static void test_topology_pci_discover_errors(void **state)
{
        fixture *f = *state;
        const char *dev = "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0";
        char rel[256], *p;

        /* uevent first; a uevent without the ids sends the reader to the files */
        snprintf(rel, sizeof(rel), "%s/uevent", dev);
        put(f, rel, "DRIVER=nvme\n");
        snprintf(rel, sizeof(rel), "%s/class", dev);
        put(f, rel, "ethernet\n");
        expect_fail(f, EINVAL, "/sys/bus/pci/devices/0000:01:00.0/class: cannot parse 'ethernet'");
        put(f, rel, "0x1000000\n");
        expect_fail(f, ERANGE, "0000:01:00.0/class: out of range");
        put(f, rel, "0x010802\n");
        /* a uevent whose ids do not parse: the files, which say it */
        snprintf(rel, sizeof(rel), "%s/uevent", dev);
        put(f, rel, "PCI_CLASS=zz\nPCI_ID=144D:A80A\n");
        {
                ncm_autoptr(ncm_pci) t = discover_ok(f);
                assert_int_equal(ncm_pci_find(t, "0000:01:00.0")->class_code, 0x010802);
        }
        /* the locality is read from the root's first function, and names it */
        put(f, "/sys/devices/pci0000:00/0000:00:00.0/numa_node", "one\n");
        expect_fail(f, EINVAL, "/sys/bus/pci/devices/0000:00:00.0/numa_node: cannot parse 'one'");
        put(f, "/sys/devices/pci0000:00/0000:00:00.0/numa_node", "0\n");
        put(f, "/sys/devices/pci0000:00/0000:00:00.0/local_cpus", "zz,yy\n");
        expect_fail(f, EINVAL, "0000:00:00.0/local_cpus");
        p = at(f, "/sys/devices/pci0000:00/0000:00:00.0/local_cpus");
        unlink(p);
        free(p);
        put(f, "/sys/devices/pci0000:00/0000:00:00.0/local_cpulist", "0-\n");
        expect_fail(f, EINVAL, "0000:00:00.0/local_cpulist");
}

static void test_topology_pci_discover_none(void **state)
{
        char *dir = tu_mkdtemp();
        int fd = ncm_fs_open_root(dir, NULL);
        ncm_autoptr(ncm_pci) p = NULL;
        ncm_error err = NCM_ERROR_INIT;
        size_t n = 99;
        (void)state;

        /* no /sys/bus/pci: a machine without PCI devices, not an error */
        assert_int_equal(ncm_pci_discover_sysfs(fd, &p, &err), 0);
        ncm_pci_devices(p, &n);
        assert_int_equal(n, 0);
        close(fd);
        tu_rm_rf(dir);
        free(dir);
}

static void test_topology_pci_links_stay_in_root(void **state)
{
        fixture *f = *state;
        char *p = at(f, "/sys/bus/pci/devices/0000:01:00.0");
        ncm_pci *t = NULL;
        ncm_error err = NCM_ERROR_INIT;

        /* a link that climbs out of the root resolves inside it, where nothing is */
        unlink(p);
        assert_int_equal(symlink("../../../../../../../../../../sys/devices/pci0000:00/"
                                 "0000:00:01.0/0000:01:00.0",
                                 p),
                         0);
        free(p);
        assert_int_equal(ncm_pci_discover_sysfs(f->fd, &t, &err), 0);
        assert_non_null(ncm_pci_find(t, "0000:01:00.0"));
        ncm_pci_free(t);
        p = at(f, "/sys/bus/pci/devices/0000:01:00.0");
        unlink(p);
        assert_int_equal(symlink("/proc/self", p), 0);
        free(p);
        /* an absolute link leads inside the root too: nowhere here, so nothing is known */
        t = discover_ok(f);
        assert_int_equal(ncm_pci_find(t, "0000:01:00.0")->class_code, -1);
        assert_null(ncm_pci_find(t, "0000:01:00.0")->local_cpus);
        assert_null(ncm_pci_find(t, "0000:01:00.0")->root);
        ncm_pci_free(t);
}

/* ------------------------------------------------------------------------------------------
 * JSON and the tree
 */

static void test_topology_pci_json_round_trip(void **state)
{
        fixture *f = *state;
        ncm_autoptr(ncm_pci) p = discover_ok(f);
        ncm_autoptr(ncm_pci) back = NULL;
        ncm_buf b = NCM_BUF_INIT;
        ncm_autojson o = NULL;
        ncm_error err = NCM_ERROR_INIT;

        ncm_pci_format_json(p, &b);
        assert_false(ncm_buf_failed(&b));
        assert_non_null(strstr(b.data, "{\"address\": \"0000:c1:00.0\", \"class\": \"0x020000\", "
                                       "\"vendor\": \"0x15b3\", \"device\": \"0x1017\", "
                                       "\"numa\": 1, \"local_cpus\": \"12-15,28-31\", "
                                       "\"root\": \"pci0000:c0\", \"bridges\": "
                                       "[\"0000:c0:01.0\"]}"));
        assert_int_equal(ncm__json_parse(b.data, b.len, "t", &o, &err), 0);
        assert_int_equal(ncm_pci_from_json_value(o, "pci", &back, &err), 0);
        assert_true(ncm__pci_equal(p, back));
        ncm_buf_done(&b);
}

static void expect_json_error(const char *text, const char *what)
{
        ncm_autojson o = NULL;
        ncm_pci *p = NULL;
        ncm_error err = NCM_ERROR_INIT;
        int r;

        assert_int_equal(ncm__json_parse(text, strlen(text), "t", &o, &err), 0);
        r = ncm_pci_from_json_value(o, "node.topology.pci", &p, &err);
        if (r >= 0 || !strstr(err.msg, what))
                fail_msg("%s: expected an error naming \"%s\", got %d \"%s\"", text, what, r,
                         err.msg);
        assert_null(p);
}

static void test_topology_pci_json_errors(void **state)
{
        ncm_autojson o = NULL;
        ncm_autoptr(ncm_pci) p = NULL;
        ncm_error err = NCM_ERROR_INIT;
        const char *min = "[{\"address\": \"3B:00.0\", \"local_cpus\": \"0-3\"}]";
        (void)state;

        /* a hand-written entry: only the address is needed */
        assert_int_equal(ncm__json_parse(min, strlen(min), "t", &o, &err), 0);
        assert_int_equal(ncm_pci_from_json_value(o, NULL, &p, &err), 0);
        assert_string_equal(ncm_pci_devices(p, &(size_t){0})->address, "0000:3b:00.0");
        assert_int_equal(ncm_pci_find(p, "0000:3b:00.0")->numa, -1);
        assert_int_equal(ncm_pci_find(p, "0000:3b:00.0")->class_code, -1);

        expect_json_error("{}", "node.topology.pci: expected array");
        expect_json_error("[1]", "node.topology.pci[0]: expected object");
        expect_json_error("[{}]", "node.topology.pci[0].address: missing");
        expect_json_error("[{\"address\": \"3b:00\"}]", "pci[0].address: not a PCI address");
        expect_json_error("[{\"address\": \"3b:00.0\", \"colour\": 1}]",
                          "pci[0].colour: unknown field");
        expect_json_error("[{\"address\": \"3b:00.0\"}, {\"address\": \"0000:3b:00.0\"}]",
                          "pci[1].address: 0000:3b:00.0 listed twice");
        expect_json_error("[{\"address\": \"3b:00.0\", \"class\": \"ethernet\"}]",
                          "pci[0].class: expected a hex number");
        expect_json_error("[{\"address\": \"3b:00.0\", \"vendor\": 70000}]", "pci[0].vendor");
        expect_json_error("[{\"address\": \"3b:00.0\", \"numa\": \"1\"}]", "pci[0].numa");
        expect_json_error("[{\"address\": \"3b:00.0\", \"local_cpus\": \"3-1\"}]",
                          "pci[0].local_cpus");
        expect_json_error("[{\"address\": \"3b:00.0\", \"root\": \"pci3b\"}]",
                          "pci[0].root: not a PCI root");
        expect_json_error("[{\"address\": \"3b:00.0\", \"bridges\": \"3a:00.0\"}]",
                          "pci[0].bridges: expected array");
        expect_json_error("[{\"address\": \"3b:00.0\", \"bridges\": [\"x\"]}]",
                          "pci[0].bridges[0]: not a PCI address");
}

static void test_topology_pci_in_topology_json(void **state)
{
        static const char text[] =
                        "{\"cpus\": [{\"cpu\": 0, \"core\": 0, \"socket\": 0, \"numa\": 0, "
                        "\"uncore\": 0}],\n"
                        " \"numa\": [{\"id\": 0, \"distances\": [10]}],\n"
                        " \"pci\": [{\"address\": \"0000:3b:00.0\", \"class\": \"0x020000\", "
                        "\"vendor\": null, \"device\": null, \"numa\": 0, \"local_cpus\": \"0\", "
                        "\"root\": null, \"bridges\": []}]}\n";
        ncm_autoptr(ncm_topo) t = NULL;
        ncm_autoptr(ncm_topo) u = NULL;
        ncm_buf b = NCM_BUF_INIT;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;

        assert_int_equal(ncm_topo_parse_json(text, strlen(text), "t.json", &t, &err), 0);
        assert_non_null(ncm_topo_pci(t));
        ncm_topo_format_json(t, &b);
        assert_string_equal(b.data, text);
        assert_int_equal(ncm_topo_parse_json(b.data, b.len, "t.json", &u, &err), 0);
        assert_true(ncm_topo_equal(t, u));
        /* a table without PCI devices differs from one with */
        ncm_topo_set_pci(u, NULL);
        assert_false(ncm_topo_equal(t, u));
        ncm_buf_reset(&b);
        ncm_topo_format_json(u, &b);
        assert_null(strstr(b.data, "pci"));
        ncm_buf_done(&b);
}

static void test_topology_pci_tree(void **state)
{
        fixture *f = *state;
        ncm_autoptr(ncm_pci) p = discover_ok(f);
        ncm_buf b = NCM_BUF_INIT;

        ncm_pci_format_tree(p, &b);
        assert_false(ncm_buf_failed(&b));
        tu_assert_golden("topologies/golden/pci/fakepci-2s4r.txt", b.data);
        ncm_buf_done(&b);
        ncm_pci_format_tree(NULL, &b);
        assert_null(b.data);
}

/* ------------------------------------------------------------------------------------------
 * Device nodes
 */

/* mknod ROOT/PATH (a character device MAJ:MIN); false when this process may not. */
static bool make_node(const fixture *f, const char *path, unsigned maj, unsigned min, bool blk)
{
        char p[1024];
        size_t base = strlen(f->root) + 1;

        snprintf(p, sizeof(p), "%s%s", f->root, path);
        for (size_t i = base; p[i]; i++) {
                if (p[i] != '/')
                        continue;
                p[i] = '\0';
                (void)mkdir(p, 0755);
                p[i] = '/';
        }
        return mknod(p, (blk ? S_IFBLK : S_IFCHR) | 0600, makedev(maj, min)) == 0;
}

static void expect_node(const fixture *f, const char *path, const char *want)
{
        char **v = NULL;
        size_t n = 0;
        ncm_error err = NCM_ERROR_INIT;

        if (ncm_pci_resolve_node(f->fd, path, &v, &n, &err) < 0)
                fail_msg("%s: %s", path, err.msg);
        assert_int_equal(n, 1);
        assert_string_equal(v[0], want);
        ncm_pci_strv_free(v, n);
}

static void test_topology_pci_resolve_nodes(void **state)
{
        fixture *f = *state;
        char **v = NULL;
        size_t n = 0;
        ncm_error err = NCM_ERROR_INIT;

        if (!make_node(f, "/dev/infiniband/uverbs0", 231, 192, false))
                skip(); /* mknod needs CAP_MKNOD */
        assert_true(make_node(f, "/dev/vfio/40", 511, 0, false));
        assert_true(make_node(f, "/dev/nvidia1", 195, 1, false));
        assert_true(make_node(f, "/dev/nvme0n1", 259, 0, true));
        assert_true(make_node(f, "/dev/tun", 10, 200, false));
        expect_node(f, "/dev/infiniband/uverbs0", "0000:c1:00.0");
        expect_node(f, "/dev/vfio/40", "0000:c1:00.2");
        expect_node(f, "/dev/nvidia1", "0000:81:00.0");
        expect_node(f, "/dev/nvme0n1", "0000:01:00.0");

        assert_int_equal(ncm_pci_resolve_node(f->fd, "/dev/tun", &v, &n, &err), -ENODEV);
        assert_non_null(strstr(err.msg, "/dev/tun"));
        assert_int_equal(ncm_pci_resolve_node(f->fd, "/dev/missing", &v, &n, &err), -ENOENT);
        assert_int_equal(ncm_pci_resolve_node(f->fd, "/sys/bus/pci/devices/0000:c1:00.0/class", &v,
                                              &n, &err),
                         -ENODEV);
        assert_non_null(strstr(err.msg, "not a device node"));
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_topology_pci_parse_address),
                        cmocka_unit_test(test_topology_pci_parse_hex),
                        cmocka_unit_test(test_topology_pci_path_chain),
                        cmocka_unit_test(test_topology_pci_parse_uevent),
                        cmocka_unit_test(test_topology_pci_class_names),
                        cmocka_unit_test_setup_teardown(test_topology_pci_discover_fake, setup_2s4r,
                                                        teardown),
                        cmocka_unit_test_setup_teardown(test_topology_pci_discover_lenient,
                                                        setup_2s4r, teardown),
                        cmocka_unit_test_setup_teardown(test_topology_pci_discover_per_root,
                                                        setup_2s4r, teardown),
                        cmocka_unit_test_setup_teardown(test_topology_pci_discover_broken_bridge,
                                                        setup_2s4r, teardown),
                        cmocka_unit_test_setup_teardown(test_topology_pci_discover_errors,
                                                        setup_2s4r, teardown),
                        cmocka_unit_test(test_topology_pci_discover_none),
                        cmocka_unit_test_setup_teardown(test_topology_pci_links_stay_in_root,
                                                        setup_2s4r, teardown),
                        cmocka_unit_test_setup_teardown(test_topology_pci_json_round_trip,
                                                        setup_2s4r, teardown),
                        cmocka_unit_test(test_topology_pci_json_errors),
                        cmocka_unit_test(test_topology_pci_in_topology_json),
                        cmocka_unit_test_setup_teardown(test_topology_pci_tree, setup_2s4r,
                                                        teardown),
                        cmocka_unit_test_setup_teardown(test_topology_pci_resolve_nodes, setup_2s4r,
                                                        teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
