/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CDI: qualified names (CDI's parser_test.go table, ported), spec files in JSON and YAML with
 * malformed, huge and hostile ones, and the registry of spec directories (priorities,
 * conflicts, broken files kept as errors).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nodecm/buf.h>
#include <nodecm/cdi.h>
#include <nodecm/fs.h>
#include "testutil.h"

/* ------------------------------------------------------------------------------------------
 * Names
 */

static void test_cdi_names_table(void **state)
{
        /* CDI's TestQualifiedName: the qualified ones, then the parsable but invalid ones */
        static const char *const ok[] = {
                        "vendor.com/class=dev",
                        "a/b=c",
                        "aa/b=cc",
                        "a/bb=cc",
                        "vendor.com/class=0",
                        "vendor1.com/class1=dev1",
                        "vendor1.com/class.subclass=dev1",
                        "other-vendor1.com/class_1=dev_1",
                        "yet_another-vendor2.com/c-lass_2=dev_1:2.3",
        };
        static const char *const bad[] = {
                        "_invalid.com/class=dev",
                        "invalid2.com-/class=dev",
                        "invalid3.com/_class=dev",
                        "invalid4.com/class_=dev",
                        "invalid5.com/class=-dev",
                        "invalid6.com/class=dev:",
                        "*.com/*dev=*gpu*",
                        "",
                        "/dev/null",
                        "vendor.com/class",
                        "vendor.com=dev",
                        "/class=dev",
                        "vendor.com/=dev",
                        "vendor.com/class=",
                        "v/c=d e",
        };
        (void)state;

        for (size_t i = 0; i < NCM_ELEMENTSOF(ok); i++) {
                ncm_error err = NCM_ERROR_INIT;
                if (ncm_cdi_check_name(ok[i], &err) != 0)
                        fail_msg("%s: %s", ok[i], err.msg);
        }
        for (size_t i = 0; i < NCM_ELEMENTSOF(bad); i++)
                if (ncm_cdi_check_name(bad[i], NULL) != -EINVAL)
                        fail_msg("%s accepted", bad[i]);
        assert_int_equal(ncm_cdi_check_name(NULL, NULL), -EINVAL);
}

static void expect_name_error(const char *name, const char *text)
{
        ncm_error err = NCM_ERROR_INIT;
        assert_int_equal(ncm_cdi_check_name(name, &err), -EINVAL);
        assert_string_equal(err.msg, text);
}

static void test_cdi_names_texts(void **state)
{
        ncm_error err = NCM_ERROR_INIT;
        (void)state;

        /* CDI's own words */
        expect_name_error("vendor.com/class", "unqualified device \"vendor.com/class\", missing "
                                              "vendor");
        expect_name_error("_invalid.com/class=dev",
                          "invalid device \"_invalid.com/class=dev\": invalid vendor. "
                          "\"_invalid.com\", should start with letter");
        expect_name_error("invalid4.com/class_=dev",
                          "invalid device \"invalid4.com/class_=dev\": invalid class. "
                          "\"class_\", should end with a letter or digit");
        expect_name_error("v.com/c=-dev",
                          "invalid device \"v.com/c=-dev\": invalid class \"-dev\", "
                          "should start with a letter or digit");
        expect_name_error("v.com/c=d e", "invalid device \"v.com/c=d e\": invalid character ' ' in "
                                         "device name \"d e\"");
        expect_name_error("v.com/c=dev:", "invalid device \"v.com/c=dev:\": invalid name \"dev:\", "
                                          "should end with a letter or digit");
        expect_name_error("v.c*m/c=d", "invalid device \"v.c*m/c=d\": invalid vendor. invalid "
                                       "character '*' in name \"v.c*m\"");
        /* a terminal-hostile name comes back quoted */
        expect_name_error("v/c=\x1b[31m", "invalid device \"v/c=\\x1b[31m\": invalid class "
                                          "\"\\x1b[31m\", should start with a letter or digit");

        assert_int_equal(ncm_cdi_check_kind("nvidia.com/gpu", &err), 0);
        assert_int_equal(ncm_cdi_check_kind("nvidia.com", &err), -EINVAL);
        assert_string_equal(err.msg, "kind \"nvidia.com\" does not contain a /");
        assert_int_equal(ncm_cdi_check_kind("nvidia.com/-gpu", &err), -EINVAL);
        assert_string_equal(err.msg, "invalid class. \"-gpu\", should start with letter");
}

/* ------------------------------------------------------------------------------------------
 * Specs
 */

static ncm_cdi_spec *parse_ok(const char *text)
{
        ncm_cdi_spec *s = NULL;
        ncm_error err = NCM_ERROR_INIT;
        if (ncm_cdi_spec_parse(text, strlen(text), "spec.yaml", &s, &err) != 0)
                fail_msg("%s", err.msg);
        return s;
}

static void expect_spec_error(const char *text, int code, const char *what)
{
        ncm_cdi_spec *s = NULL;
        ncm_error err = NCM_ERROR_INIT;
        int r = ncm_cdi_spec_parse(text, strlen(text), "spec.yaml", &s, &err);
        if (r != -code || !strstr(err.msg, what) || strchr(err.msg, '\n'))
                fail_msg("%s\nexpected -%d naming \"%s\", got %d \"%s\"", text, code, what, r,
                         err.msg);
        assert_null(s);
}

static void test_cdi_spec_yaml(void **state)
{
        ncm_autoptr(ncm_cdi_spec) s =
                        parse_ok("cdiVersion: \"0.6.0\"\n"
                                 "kind: example.com/gpu\n"
                                 "annotations: {owner: dra}\n"
                                 "containerEdits:\n"
                                 "  deviceNodes:\n"
                                 "  - path: /dev/example-ctl\n"
                                 "devices:\n"
                                 "- name: gpu0\n"
                                 "  containerEdits:\n"
                                 "    env: [A=1]\n"
                                 "    deviceNodes:\n"
                                 "    - path: /dev/dri/renderD128\n"
                                 "      hostPath: /dev/dri/renderD129\n"
                                 "      type: c\n"
                                 "      major: 226\n"
                                 "      minor: 128\n"
                                 "      permissions: rw\n"
                                 "      fileMode: 0666\n"
                                 "    hooks: [{hookName: createContainer, path: /bin/true}]\n"
                                 "- name: \"0000:3b:00.0\"\n"
                                 "  containerEdits: {}\n"
                                 "- name: common\n"
                                 "  somethingNew: [1, 2]\n");
        (void)state;

        assert_string_equal(s->version, "0.6.0");
        assert_string_equal(s->kind, "example.com/gpu");
        assert_int_equal(s->n_nodes, 1);
        assert_string_equal(s->nodes[0].path, "/dev/example-ctl");
        assert_int_equal(s->nodes[0].major, -1);
        assert_int_equal(s->n_devices, 3);
        assert_string_equal(s->devices[0].name, "example.com/gpu=gpu0");
        assert_int_equal(s->devices[0].n_nodes, 1);
        assert_string_equal(s->devices[0].nodes[0].host_path, "/dev/dri/renderD129");
        assert_int_equal(s->devices[0].nodes[0].type, 'c');
        assert_int_equal(s->devices[0].nodes[0].major, 226);
        assert_int_equal(s->devices[0].nodes[0].minor, 128);
        assert_string_equal(s->devices[1].name, "example.com/gpu=0000:3b:00.0");
        assert_int_equal(s->devices[1].n_nodes, 0);
        assert_int_equal(s->devices[2].n_nodes, 0);
}

static void test_cdi_spec_json(void **state)
{
        ncm_autoptr(ncm_cdi_spec) s = parse_ok(
                        "{\"cdiVersion\": \"0.3.0\", \"kind\": \"vendor.com/nic\", \"devices\": "
                        "[{\"name\": \"vf0\", \"containerEdits\": {\"deviceNodes\": "
                        "[{\"path\": \"/dev/vfio/40\"}]}}]}");
        (void)state;
        assert_string_equal(s->devices[0].name, "vendor.com/nic=vf0");
        assert_null(s->devices[0].nodes[0].host_path);
        assert_int_equal(s->devices[0].nodes[0].type, 0);
}

static void test_cdi_spec_malformed(void **state)
{
        (void)state;
        expect_spec_error("", EINVAL, "spec.yaml: no spec data");
        expect_spec_error("[1, 2]", EINVAL, "spec.yaml: spec: expected object, got array");
        expect_spec_error("just text", EINVAL, "spec.yaml: spec: expected object");
        expect_spec_error("{\"cdiVersion\": ", EINVAL, "spec.yaml:1:");
        expect_spec_error("kind: v.com/c\ndevices: [{name: a}]\n", EINVAL,
                          "spec.yaml: invalid version \"\"");
        expect_spec_error("cdiVersion: 1.x\nkind: v.com/c\ndevices: [{name: a}]\n", EINVAL,
                          "invalid version \"1.x\"");
        expect_spec_error("cdiVersion: [1]\nkind: v.com/c\n", EINVAL,
                          "cdiVersion: expected string, got array");
        expect_spec_error("cdiVersion: 0.6.0\ndevices: [{name: a}]\n", EINVAL,
                          "spec.yaml: kind: missing");
        expect_spec_error("cdiVersion: 0.6.0\nkind: nvidia\ndevices: [{name: a}]\n", EINVAL,
                          "spec.yaml: kind: kind \"nvidia\" does not contain a /");
        expect_spec_error("cdiVersion: 0.6.0\nkind: v.com/c\n", EINVAL,
                          "spec.yaml: invalid spec, no devices");
        expect_spec_error("cdiVersion: 0.6.0\nkind: v.com/c\ndevices: []\n", EINVAL,
                          "invalid spec, no devices");
        expect_spec_error("cdiVersion: 0.6.0\nkind: v.com/c\ndevices: {a: 1}\n", EINVAL,
                          "devices: expected array, got object");
        expect_spec_error("cdiVersion: 0.6.0\nkind: v.com/c\ndevices: [{name: a}, {name: a}]\n",
                          EINVAL, "spec.yaml: invalid spec, multiple device \"a\"");
        expect_spec_error("cdiVersion: 0.6.0\nkind: v.com/c\ndevices: [{name: -a}]\n", EINVAL,
                          "failed add device \"-a\": invalid class \"-a\"");
        expect_spec_error("cdiVersion: 0.6.0\nkind: v.com/c\ndevices: [{}]\n", EINVAL,
                          "devices[0].name: missing");
        expect_spec_error("cdiVersion: 0.6.0\nkind: v.com/c\ndevices: [{name: a, "
                          "containerEdits: [1]}]\n",
                          EINVAL, "devices[0].containerEdits: expected object");
        expect_spec_error("cdiVersion: 0.6.0\nkind: v.com/c\ndevices: [{name: a, "
                          "containerEdits: {deviceNodes: {path: /dev/x}}}]\n",
                          EINVAL, "devices[0].containerEdits.deviceNodes: expected array");
        expect_spec_error("cdiVersion: 0.6.0\nkind: v.com/c\ndevices: [{name: a, "
                          "containerEdits: {deviceNodes: [{type: c}]}}]\n",
                          EINVAL, "devices[0].containerEdits.deviceNodes[0].path: missing");
        expect_spec_error("cdiVersion: 0.6.0\nkind: v.com/c\ndevices: [{name: a, "
                          "containerEdits: {deviceNodes: [{path: \"\"}]}}]\n",
                          EINVAL, "deviceNodes[0].path: invalid (empty) device path");
        expect_spec_error("cdiVersion: 0.6.0\nkind: v.com/c\ndevices: [{name: a, "
                          "containerEdits: {deviceNodes: [{path: /dev/x, type: z}]}}]\n",
                          EINVAL, "deviceNodes[0].type: device /dev/x: invalid type \"z\"");
        expect_spec_error("cdiVersion: 0.6.0\nkind: v.com/c\ndevices: [{name: a, "
                          "containerEdits: {deviceNodes: [{path: /dev/x, major: \"226\"}]}}]\n",
                          EINVAL, "deviceNodes[0].major: expected an integer");
        expect_spec_error("cdiVersion: 0.6.0\nkind: v.com/c\ndevices: [{name: a, "
                          "containerEdits: {deviceNodes: [{path: /dev/x, minor: -1}]}}]\n",
                          ERANGE, "deviceNodes[0].minor");
        expect_spec_error("cdiVersion: 0.6.0\nkind: v.com/c\ndevices: [{name: a, "
                          "containerEdits: {deviceNodes: [{path: /dev/x, hostPath: 7}]}}]\n",
                          EINVAL, "deviceNodes[0].hostPath: expected string");
        expect_spec_error("{\"cdiVersion\": \"0.6.0\", \"kind\": \"v.com/c\", \"devices\": "
                          "[{\"name\": \"a\", \"containerEdits\": {\"deviceNodes\": "
                          "[{\"path\": \"/dev/x\\u0000y\"}]}}]}",
                          EINVAL, "path: holds a NUL byte");
        /* YAML aliases are refused (a billion laughs needs them) */
        expect_spec_error("cdiVersion: 0.6.0\nkind: v.com/c\nx: &a [1]\ndevices: *a\n", EINVAL,
                          "spec.yaml:");
}

static void test_cdi_spec_hostile(void **state)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_cdi_spec *s = NULL;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;

        /* deeper than the reader goes */
        for (int i = 0; i < 200; i++)
                ncm_buf_putc(&b, '[');
        assert_int_equal(ncm_cdi_spec_parse(b.data, b.len, "deep.json", &s, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "deep.json"));
        ncm_buf_reset(&b);

        /* more devices than a spec may hold */
        ncm_buf_puts(&b, "{\"cdiVersion\": \"0.6.0\", \"kind\": \"v.com/c\", \"devices\": [");
        for (int i = 0; i <= 65536; i++)
                ncm_buf_printf(&b, "%s{\"name\": \"d%d\"}", i ? ", " : "", i);
        ncm_buf_puts(&b, "]}");
        assert_int_equal(ncm_cdi_spec_parse(b.data, b.len, "many.json", &s, &err), -ERANGE);
        assert_non_null(strstr(err.msg, "65537 devices, more than 65536"));
        ncm_buf_reset(&b);

        /* many devices are fine, and duplicates among them are found */
        ncm_buf_puts(&b, "{\"cdiVersion\": \"0.6.0\", \"kind\": \"v.com/c\", \"devices\": [");
        for (int i = 0; i < 20000; i++)
                ncm_buf_printf(&b, "%s{\"name\": \"d%d\"}", i ? ", " : "", i % 19999);
        ncm_buf_puts(&b, "]}");
        assert_int_equal(ncm_cdi_spec_parse(b.data, b.len, "dup.json", &s, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "multiple device \"d0\""));
        ncm_buf_reset(&b);

        /* larger than a spec file may be */
        while (b.len <= NCM_CDI_SPEC_MAX)
                ncm_buf_puts(&b,
                             "# ............................................................\n");
        assert_int_equal(ncm_cdi_spec_parse(b.data, b.len, "huge.yaml", &s, &err), -EFBIG);
        ncm_buf_done(&b);

        /* binary garbage */
        {
                static const char bin[] = "\x7f"
                                          "ELF\x02\x01\x01\0\0\0\xff\xfe";
                assert_int_equal(ncm_cdi_spec_parse(bin, sizeof(bin) - 1, "bin", &s, &err),
                                 -EINVAL);
        }
        assert_null(s);
}

/* ------------------------------------------------------------------------------------------
 * The registry
 */

typedef struct fixture {
        char *root;
        int fd;
} fixture;

static int setup(void **state)
{
        fixture *f = calloc(1, sizeof(*f));
        f->root = tu_mkdtemp();
        f->fd = ncm_fs_open_root(f->root, NULL);
        *state = f;
        return 0;
}

static int teardown(void **state)
{
        fixture *f = *state;
        close(f->fd);
        tu_rm_rf(f->root);
        free(f->root);
        free(f);
        return 0;
}

static void put(const fixture *f, const char *rel, const char *text)
{
        char p[1024];
        snprintf(p, sizeof(p), "%s%s", f->root, rel);
        for (char *s = p + strlen(f->root) + 1; *s; s++)
                if (*s == '/') {
                        *s = '\0';
                        (void)mkdir(p, 0755);
                        *s = '/';
                }
        tu_write_file(p, text);
}

static const char *spec(const char *kind, const char *dev, const char *path)
{
        static char buf[512];
        snprintf(buf, sizeof(buf),
                 "{\"cdiVersion\": \"0.6.0\", \"kind\": \"%s\", \"devices\": [{\"name\": \"%s\", "
                 "\"containerEdits\": {\"deviceNodes\": [{\"path\": \"%s\"}]}}]}",
                 kind, dev, path);
        return buf;
}

static void test_cdi_registry_priorities(void **state)
{
        fixture *f = *state;
        ncm_autoptr(ncm_cdi_registry) r = NULL;
        ncm_error err = NCM_ERROR_INIT;
        const ncm_cdi_device *d;
        const ncm_cdi_spec *sp;
        const char *file;

        put(f, "/etc/cdi/a.json", spec("v.com/gpu", "gpu0", "/dev/etc0"));
        put(f, "/etc/cdi/b.yaml",
            "cdiVersion: 0.6.0\nkind: v.com/gpu\ndevices:\n- name: gpu1\n"
            "  containerEdits: {deviceNodes: [{path: /dev/etc1}]}\n"
            "containerEdits: {deviceNodes: [{path: /dev/ctl}]}\n");
        /* the dynamic directory overrides the static one */
        put(f, "/var/run/cdi/z.json", spec("v.com/gpu", "gpu0", "/dev/run0"));
        /* conflicts within one directory leave the name unresolvable, even if overridden */
        put(f, "/etc/cdi/c.json", spec("v.com/nic", "vf0", "/dev/c"));
        put(f, "/etc/cdi/d.json", spec("v.com/nic", "vf0", "/dev/d"));
        put(f, "/var/run/cdi/e.json", spec("v.com/nic", "vf0", "/dev/e"));
        /* broken and foreign files */
        put(f, "/etc/cdi/broken.yaml", "cdiVersion: 0.6.0\nkind: nope\ndevices: [{name: x}]\n");
        put(f, "/etc/cdi/notes.txt", "not a spec");
        put(f, "/etc/cdi/sub.json/inner.json", spec("v.com/gpu", "hidden", "/dev/h"));

        assert_int_equal(ncm_cdi_registry_load(f->fd, NULL, 0, &r, &err), 0);
        d = ncm_cdi_registry_find(r, "v.com/gpu=gpu0", &sp, &file);
        assert_non_null(d);
        assert_string_equal(d->nodes[0].path, "/dev/run0");
        assert_string_equal(file, "/var/run/cdi/z.json");
        d = ncm_cdi_registry_find(r, "v.com/gpu=gpu1", &sp, &file);
        assert_non_null(d);
        assert_int_equal(sp->n_nodes, 1);
        assert_string_equal(sp->nodes[0].path, "/dev/ctl");
        assert_null(ncm_cdi_registry_find(r, "v.com/nic=vf0", NULL, NULL));
        assert_null(ncm_cdi_registry_find(r, "v.com/gpu=hidden", NULL, NULL));
        assert_null(ncm_cdi_registry_find(r, "v.com/gpu=none", NULL, NULL));
        assert_int_equal(ncm_cdi_registry_num_devices(r), 2);
        assert_string_equal(ncm_cdi_registry_device_at(r, 0, NULL, NULL)->name, "v.com/gpu=gpu0");
        assert_null(ncm_cdi_registry_device_at(r, 2, NULL, NULL));
        assert_int_equal(ncm_cdi_registry_num_errors(r), 2);
        assert_string_equal(ncm_cdi_registry_error(r, 0),
                            "/etc/cdi/broken.yaml: kind: kind \"nope\" does not contain a /");
        assert_string_equal(ncm_cdi_registry_error(r, 1),
                            "conflicting device \"v.com/nic=vf0\" (specs \"/etc/cdi/d.json\", "
                            "\"/etc/cdi/c.json\")");
        assert_null(ncm_cdi_registry_error(r, 2));
}

static void test_cdi_registry_dirs(void **state)
{
        fixture *f = *state;
        static const char *const dirs[] = {"/opt/cdi/"};
        static const char *const relative[] = {"cdi"};
        ncm_cdi_registry *r = NULL;
        ncm_error err = NCM_ERROR_INIT;

        /* no spec directories at all: nothing, no error */
        assert_int_equal(ncm_cdi_registry_load(f->fd, NULL, 0, &r, &err), 0);
        assert_int_equal(ncm_cdi_registry_num_devices(r), 0);
        r = ncm_cdi_registry_free(r);

        put(f, "/opt/cdi/x.yaml", spec("v.com/c", "a", "/dev/a"));
        put(f, "/opt/cdi/huge.json", "");
        {
                char p[1024];
                FILE *fp;
                snprintf(p, sizeof(p), "%s/opt/cdi/huge.json", f->root);
                fp = fopen(p, "w");
                assert_int_equal(fseek(fp, NCM_CDI_SPEC_MAX + 1, SEEK_SET), 0);
                fputc('x', fp);
                fclose(fp);
        }
        assert_int_equal(ncm_cdi_registry_load(f->fd, dirs, 1, &r, &err), 0);
        assert_non_null(ncm_cdi_registry_find(r, "v.com/c=a", NULL, NULL));
        assert_int_equal(ncm_cdi_registry_num_errors(r), 1);
        assert_non_null(strstr(ncm_cdi_registry_error(r, 0), "/opt/cdi/huge.json"));
        r = ncm_cdi_registry_free(r);

        assert_int_equal(ncm_cdi_registry_load(f->fd, relative, 1, &r, &err), -EINVAL);
        assert_string_equal(err.msg, "CDI spec directory \"cdi\": not absolute");
        assert_null(r);
}

/* past the 20ms in which a spec's times are not trusted */
static void settle(void)
{
        struct timespec ts = {0, 30 * 1000 * 1000};
        while (nanosleep(&ts, &ts) < 0)
                ;
}

static void test_cdi_stamp(void **state)
{
        fixture *f = *state;
        static const char *const dirs[] = {"/etc/cdi", "/var/run/cdi"};
        ncm_error err = NCM_ERROR_INIT;
        uint64_t a = 0, b = 0;
        char p[1024], q[1024];

        /* no directory: a stamp all the same */
        assert_int_equal(ncm_cdi_stamp(f->fd, NULL, 0, &a, &err), 1);
        assert_int_equal(ncm_cdi_stamp(f->fd, dirs, 2, &b, &err), 1);
        assert_true(a == b);
        /* a new spec: too fresh to trust its times, then settled and unchanged */
        put(f, "/etc/cdi/a.json", spec("v.com/gpu", "gpu0", "/dev/a"));
        assert_int_equal(ncm_cdi_stamp(f->fd, NULL, 0, &b, &err), 0);
        assert_true(a != b);
        settle();
        assert_int_equal(ncm_cdi_stamp(f->fd, NULL, 0, &a, &err), 1);
        assert_true(a == b);
        /* rewritten in place, same size: its change time tells */
        put(f, "/etc/cdi/a.json", spec("v.com/gpu", "gpu1", "/dev/a"));
        settle();
        assert_int_equal(ncm_cdi_stamp(f->fd, NULL, 0, &b, &err), 1);
        assert_true(a != b);
        /* the same files in the other directory are another registry */
        a = b;
        snprintf(p, sizeof(p), "%s/etc/cdi/a.json", f->root);
        snprintf(q, sizeof(q), "%s/var/run/cdi/a.json", f->root);
        put(f, "/var/run/cdi/a.json", "");
        assert_int_equal(rename(p, q), 0);
        settle();
        assert_int_equal(ncm_cdi_stamp(f->fd, NULL, 0, &b, &err), 1);
        assert_true(a != b);
        /* a symbolic link may change without a trace here */
        assert_int_equal(symlink("a.json", p), 0);
        assert_int_equal(ncm_cdi_stamp(f->fd, NULL, 0, &b, &err), 0);
        /* a directory that cannot be named */
        {
                static const char *const relative[] = {"cdi"};
                assert_int_equal(ncm_cdi_stamp(f->fd, relative, 1, &b, &err), -EINVAL);
        }
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_cdi_names_table),
                        cmocka_unit_test(test_cdi_names_texts),
                        cmocka_unit_test(test_cdi_spec_yaml),
                        cmocka_unit_test(test_cdi_spec_json),
                        cmocka_unit_test(test_cdi_spec_malformed),
                        cmocka_unit_test(test_cdi_spec_hostile),
                        cmocka_unit_test_setup_teardown(test_cdi_registry_priorities, setup,
                                                        teardown),
                        cmocka_unit_test_setup_teardown(test_cdi_registry_dirs, setup, teardown),
                        cmocka_unit_test_setup_teardown(test_cdi_stamp, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
