/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The Static policy against the kubelet's policy_static_test.go tables, kept as data in
 * tests/data/memorymanager/policy-static.json (its README gives the notation), plus nodecm's own
 * cases: the group rule's explanations, scaling to 64 NUMA nodes, drift tolerance, sidecars,
 * pod-scope hints and the reservedMemory configuration.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/memorymanager.h>
#include "base/json.h"
#include "memorymanager/mm-internal.h"
#include "testutil.h"

static uint64_t qty(const char *s)
{
        ncm_quantity q;
        if (ncm_quantity_parse(s, &q, NULL) < 0)
                fail_msg("bad quantity %s", s);
        return (uint64_t)ncm_quantity_value(&q);
}

/* "allocatable/free/reserved/systemReserved/total" */
static ncm_mem_table table_of(const char *s)
{
        char buf[256];
        char *f[5], *save = NULL;
        ncm_mem_table t;
        snprintf(buf, sizeof(buf), "%s", s);
        f[0] = strtok_r(buf, "/", &save);
        for (int i = 1; i < 5; i++)
                f[i] = strtok_r(NULL, "/", &save);
        assert_non_null(f[4]);
        t.allocatable = qty(f[0]);
        t.free = qty(f[1]);
        t.reserved = qty(f[2]);
        t.system_reserved = qty(f[3]);
        t.total = qty(f[4]);
        return t;
}

static int cmp_node(const void *a, const void *b)
{
        return ((const ncm_mem_node *)a)->id - ((const ncm_mem_node *)b)->id;
}

static int cmp_type(const void *a, const void *b)
{
        return strcmp(((const ncm_mem_type *)a)->name, ((const ncm_mem_type *)b)->name);
}

static int cmp_block(const void *a, const void *b)
{
        return strcmp(((const ncm_mem_block *)a)->type, ((const ncm_mem_block *)b)->type);
}

static void fill_machine(ncm_mem_state *s, json_object *o)
{
        size_t n = 0;
        s->nodes = calloc((size_t)json_object_object_length(o) + 1, sizeof(*s->nodes));
        json_object_object_foreach(o, key, val)
        {
                ncm_mem_node *nd = &s->nodes[n++];
                json_object *cells = ncm__json_get(val, "cells"), *jn = ncm__json_get(val, "n");
                size_t nt = 0;
                nd->id = atoi(key);
                nd->assignments = jn ? json_object_get_int64(jn) : 0;
                nd->ncells = cells ? json_object_array_length(cells) : 0;
                nd->cells = calloc(nd->ncells + 1, sizeof(int));
                for (size_t i = 0; i < nd->ncells; i++)
                        nd->cells[i] = json_object_get_int(json_object_array_get_idx(cells, i));
                nd->types = calloc(8, sizeof(*nd->types));
                json_object_object_foreach(val, tk, tv)
                {
                        if (strcmp(tk, "cells") == 0 || strcmp(tk, "n") == 0)
                                continue;
                        nd->types[nt].name = strdup(tk);
                        nd->types[nt].t = table_of(json_object_get_string(tv));
                        nt++;
                }
                nd->ntypes = nt;
                qsort(nd->types, nt, sizeof(*nd->types), cmp_type);
        }
        s->nnodes = n;
        qsort(s->nodes, n, sizeof(*s->nodes), cmp_node);
}

static void fill_assignments(ncm_mem_state *s, json_object *o)
{
        json_object_object_foreach(o, pod, containers)
        {
                json_object_object_foreach(containers, name, blocks)
                {
                        size_t n = json_object_array_length(blocks);
                        ncm_mem_block *b = calloc(n + 1, sizeof(*b));
                        for (size_t i = 0; i < n; i++) {
                                json_object *e = json_object_array_get_idx(blocks, i);
                                json_object *numa = json_object_array_get_idx(e, 0);
                                b[i].nnuma = json_object_array_length(numa);
                                b[i].numa = calloc(b[i].nnuma + 1, sizeof(int));
                                for (size_t k = 0; k < b[i].nnuma; k++)
                                        b[i].numa[k] = json_object_get_int(
                                                        json_object_array_get_idx(numa, k));
                                b[i].type = strdup(json_object_get_string(
                                                json_object_array_get_idx(e, 1)));
                                b[i].size = qty(json_object_get_string(
                                                json_object_array_get_idx(e, 2)));
                        }
                        /* the kubelet's tables compare blocks as sets; nodecm orders them by type
                         */
                        qsort(b, n, sizeof(*b), cmp_block);
                        assert_int_equal(ncm__mem_state_set(s, pod, name, b, n), 0);
                }
        }
}

/* A machine of the given nodes (one CPU each), with memory from "machine" when given. */
static ncm_topo *machine_of(json_object *tc)
{
        json_object *m = ncm__json_get(tc, "machine"), *st = ncm__json_get(tc, "state");
        json_object *res = ncm__json_get(tc, "reserved");
        int ids[64];
        size_t n = 0;
        ncm_cpu_info cpus[64];
        ncm_topo *t = NULL;
        ncm_error err = NCM_ERROR_INIT;

#define ADD_ID(v)                                                                                  \
        do {                                                                                       \
                int id_ = (v);                                                                     \
                bool seen_ = false;                                                                \
                for (size_t k_ = 0; k_ < n; k_++)                                                  \
                        seen_ |= ids[k_] == id_;                                                   \
                if (!seen_)                                                                        \
                        ids[n++] = id_;                                                            \
        } while (0)
        if (m)
                for (size_t i = 0; i < json_object_array_length(m); i++)
                        ADD_ID(json_object_get_int(
                                        ncm__json_get(json_object_array_get_idx(m, i), "id")));
        if (st) {
                json_object_object_foreach(st, key, val)
                {
                        (void)val;
                        ADD_ID(atoi(key));
                }
        }
        if (res) {
                json_object_object_foreach(res, key, val)
                {
                        (void)val;
                        ADD_ID(atoi(key));
                }
        }
#undef ADD_ID
        if (n == 0)
                ids[n++] = 0;
        for (size_t i = 0; i < n; i++)
                cpus[i] = (ncm_cpu_info){(int)i, (int)i, 0, ids[i], 0};
        {
                int sorted[64];
                memcpy(sorted, ids, n * sizeof(int));
                for (size_t i = 1; i < n; i++)
                        for (size_t j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
                                int x = sorted[j];
                                sorted[j] = sorted[j - 1];
                                sorted[j - 1] = x;
                        }
                if (ncm_topo_new(cpus, n, sorted, n, NULL, &t, &err) < 0)
                        fail_msg("%s", err.msg);
        }
        for (size_t i = 0; m && i < json_object_array_length(m); i++) {
                json_object *e = json_object_array_get_idx(m, i);
                json_object *hp = ncm__json_get(e, "hugepages");
                ncm_hugepages pools[8];
                size_t np = hp ? json_object_array_length(hp) : 0;
                for (size_t k = 0; k < np; k++) {
                        json_object *p = json_object_array_get_idx(hp, k);
                        pools[k].page_size = (uint64_t)json_object_get_int64(
                                        json_object_array_get_idx(p, 0));
                        pools[k].num_pages = (uint64_t)json_object_get_int64(
                                        json_object_array_get_idx(p, 1));
                }
                assert_int_equal(ncm_topo_set_numa_memory(
                                                 t, json_object_get_int(ncm__json_get(e, "id")),
                                                 qty(json_object_get_string(
                                                                 ncm__json_get(e, "memory"))),
                                                 pools, np, NULL),
                                 0);
        }
        return t;
}

static ncm_mem_policy *policy_of(json_object *tc, const ncm_topo *t)
{
        json_object *res = ncm__json_get(tc, "reserved");
        ncm_mem_reservations l = {0};
        ncm_mem_policy_config c = {.policy = "Static", .reserved = &l};
        ncm_mem_policy *p = NULL;
        ncm_error err = NCM_ERROR_INIT;

        if (res) {
                json_object_object_foreach(res, key, types)
                {
                        json_object_object_foreach(types, tn, tv)
                        {
                                ncm_quantity q;
                                assert_int_equal(ncm_quantity_parse(json_object_get_string(tv), &q,
                                                                    NULL),
                                                 0);
                                assert_int_equal(ncm_mem_reservations_add(&l, atoi(key), tn, &q),
                                                 0);
                        }
                }
        }
        if (ncm_mem_policy_new(t, &c, &p, &err) < 0)
                fail_msg("%s", err.msg);
        ncm_mem_reservations_done(&l);
        return p;
}

static ncm_mem_state *state_of(json_object *tc, const char *st_key, const char *as_key)
{
        ncm_mem_state *s = ncm_mem_state_new("Static");
        json_object *st = ncm__json_get(tc, st_key), *as = ncm__json_get(tc, as_key);
        if (st)
                fill_machine(s, st);
        if (as)
                fill_assignments(s, as);
        return s;
}

static void add_container(ncm_buf *b, json_object *c)
{
        json_object *req = ncm__json_get(c, "req");
        const char *mem = "1Gi", *hp = "1Gi", *hpname = "hugepages-1Gi";
        bool burstable = false;
        ncm_buf_printf(b, "{\"name\": \"%s\", \"resources\": ",
                       json_object_get_string(ncm__json_get(c, "name")));
        if (json_object_is_type(req, json_type_string)) {
                burstable = strcmp(json_object_get_string(req), "burstable") == 0;
        } else {
                json_object_object_foreach(req, k, v)
                {
                        if (strcmp(k, "memory") == 0) {
                                mem = json_object_get_string(v);
                        } else {
                                hpname = k;
                                hp = json_object_get_string(v);
                        }
                }
        }
        if (burstable)
                ncm_buf_printf(b,
                               "{\"limits\": {\"cpu\": \"1000Mi\", \"memory\": \"2Gi\", \"%s\": "
                               "\"1Gi\"}, \"requests\": {\"cpu\": \"1000Mi\", \"memory\": \"1Gi\", "
                               "\"%s\": \"1Gi\"}}}",
                               hpname, hpname);
        else
                ncm_buf_printf(b,
                               "{\"limits\": {\"cpu\": \"1000Mi\", \"memory\": \"%s\", \"%s\": "
                               "\"%s\"}, \"requests\": {\"cpu\": \"1000Mi\", \"memory\": \"%s\", "
                               "\"%s\": \"%s\"}}}",
                               mem, hpname, hp, mem, hpname, hp);
}

static ncm_pod *pod_of(json_object *tc)
{
        json_object *p = ncm__json_get(tc, "pod");
        json_object *init = ncm__json_get(p, "init"), *cs = ncm__json_get(p, "containers");
        ncm_buf b = NCM_BUF_INIT;
        ncm_pod *pod = NULL;
        ncm_error err = NCM_ERROR_INIT;

        ncm_buf_printf(&b, "{\"metadata\": {\"uid\": \"%s\", \"name\": \"%s\"}, \"spec\": {",
                       json_object_get_string(ncm__json_get(p, "uid")),
                       json_object_get_string(ncm__json_get(p, "uid")));
        if (init) {
                ncm_buf_puts(&b, "\"initContainers\": [");
                for (size_t i = 0; i < json_object_array_length(init); i++) {
                        if (i)
                                ncm_buf_puts(&b, ", ");
                        add_container(&b, json_object_array_get_idx(init, i));
                }
                ncm_buf_puts(&b, "], ");
        }
        ncm_buf_puts(&b, "\"containers\": [");
        for (size_t i = 0; i < json_object_array_length(cs); i++) {
                if (i)
                        ncm_buf_puts(&b, ", ");
                add_container(&b, json_object_array_get_idx(cs, i));
        }
        ncm_buf_puts(&b, "]}}");
        if (ncm_pod_parse(b.data, b.len, "pod", &pod, &err) < 0)
                fail_msg("%s: %s", b.data, err.msg);
        ncm_buf_done(&b);
        return pod;
}

/* "any", "any*", "[0]", "[1]*", "[0,1]" */
static ncm_hint hint_of(const char *s)
{
        ncm_hint h = {0};
        h.preferred = s[strlen(s) - 1] == '*';
        if (strncmp(s, "any", 3) == 0) {
                h.any = true;
                return h;
        }
        for (const char *p = s + 1; *p && *p != ']';) {
                h.numa |= UINT64_C(1) << strtol(p, (char **)&p, 10);
                if (*p == ',')
                        p++;
        }
        return h;
}

/* The machine state and assignments as the checkpoint writes them (comparable text). */
static char *text_of(const ncm_mem_state *s)
{
        ncm_buf b = NCM_BUF_INIT;
        char *end;
        ncm_mem_checkpoint_format(s, NCM_MEM_CHECKPOINT_V1, &b);
        end = strstr(b.data, ",\"checksum\":");
        *end = '\0';
        return ncm_buf_steal(&b);
}

static void check_state(const char *desc, const ncm_mem_state *got, json_object *tc)
{
        ncm_mem_state *want = state_of(tc, "expect_state", "expect_assignments");
        char *a = text_of(got), *b = text_of(want);
        if (strcmp(a, b) != 0)
                fail_msg("%s:\n got %s\nwant %s", desc, a, b);
        free(a);
        free(b);
        ncm_mem_state_free(want);
}

static json_object *cases(const char *section)
{
        static json_object *all;
        size_t len;
        char *text;
        if (!all) {
                text = tu_read_data("memorymanager/policy-static.json", &len);
                assert_int_equal(ncm__json_parse(text, len, "policy-static.json", &all, NULL), 0);
                free(text);
        }
        if (!section) {
                json_object_put(all);
                all = NULL;
                return NULL;
        }
        return ncm__json_get(all, section);
}

static void test_mem_policy_kubelet_start(void **state)
{
        json_object *cs = cases("start");
        (void)state;
        for (size_t i = 0; i < json_object_array_length(cs); i++) {
                json_object *tc = json_object_array_get_idx(cs, i);
                const char *desc = json_object_get_string(ncm__json_get(tc, "desc"));
                json_object *experr = ncm__json_get(tc, "error");
                ncm_topo *t = machine_of(tc);
                ncm_mem_policy *p = policy_of(tc, t);
                ncm_mem_state *s = state_of(tc, "state", "assignments");
                ncm_error err = NCM_ERROR_INIT;
                int r = ncm_mem_policy_start(p, s, NULL, &err);
                if (experr) {
                        if (r >= 0 || strcmp(err.msg, json_object_get_string(experr)) != 0)
                                fail_msg("%s: got %d \"%s\"", desc, r, err.msg);
                } else {
                        if (r < 0)
                                fail_msg("%s: %s", desc, err.msg);
                        check_state(desc, s, tc);
                }
                ncm_mem_state_free(s);
                ncm_mem_policy_free(p);
                ncm_topo_free(t);
        }
}

static void run_allocate(const char *section, bool all_containers)
{
        json_object *cs = cases(section);
        for (size_t i = 0; i < json_object_array_length(cs); i++) {
                json_object *tc = json_object_array_get_idx(cs, i);
                const char *desc = json_object_get_string(ncm__json_get(tc, "desc"));
                json_object *experr = ncm__json_get(tc, "error");
                ncm_topo *t = machine_of(tc);
                ncm_mem_policy *p = policy_of(tc, t);
                ncm_mem_state *s = state_of(tc, "state", "assignments");
                ncm_pod *pod = pod_of(tc);
                ncm_hint h = hint_of(json_object_get_string(ncm__json_get(tc, "hint")));
                ncm_error err = NCM_ERROR_INIT;
                int r = 0;

                /* "reuse_other_pod": the kubelet seeds reusable memory of another pod, which
                 * the first call drops; a fresh policy has none to drop */
                if (all_containers) {
                        for (size_t k = 0; r >= 0 && k < pod->n_init_containers; k++)
                                r = ncm_mem_policy_allocate(p, s, pod, &pod->init_containers[k], &h,
                                                            NULL, &err);
                        for (size_t k = 0; r >= 0 && k < pod->n_containers; k++)
                                r = ncm_mem_policy_allocate(p, s, pod, &pod->containers[k], &h,
                                                            NULL, &err);
                } else {
                        r = ncm_mem_policy_allocate(p, s, pod, &pod->containers[0], &h, NULL, &err);
                }
                if (experr) {
                        if (r >= 0 || strcmp(err.msg, json_object_get_string(experr)) != 0)
                                fail_msg("%s: got %d \"%s\"", desc, r, err.msg);
                } else {
                        if (r < 0)
                                fail_msg("%s: %s", desc, err.msg);
                        check_state(desc, s, tc);
                }
                ncm_pod_free(pod);
                ncm_mem_state_free(s);
                ncm_mem_policy_free(p);
                ncm_topo_free(t);
        }
}

static void test_mem_policy_kubelet_allocate(void **state)
{
        (void)state;
        run_allocate("allocate", false);
}

static void test_mem_policy_kubelet_allocate_init(void **state)
{
        (void)state;
        run_allocate("allocate_init", true);
}

static void test_mem_policy_kubelet_remove(void **state)
{
        json_object *cs = cases("remove");
        (void)state;
        for (size_t i = 0; i < json_object_array_length(cs); i++) {
                json_object *tc = json_object_array_get_idx(cs, i);
                const char *desc = json_object_get_string(ncm__json_get(tc, "desc"));
                ncm_topo *t = machine_of(tc);
                ncm_mem_policy *p = policy_of(tc, t);
                ncm_mem_state *s = state_of(tc, "state", "assignments");
                (void)ncm_mem_policy_remove(p, s, "pod1", "container1");
                check_state(desc, s, tc);
                ncm_mem_state_free(s);
                ncm_mem_policy_free(p);
                ncm_topo_free(t);
        }
}

/* "hugepages-1Gi: [2]* [3]* [2,3]; memory: ..." of a hints map, or "nil". */
static char *hints_text(const ncm_mem_hints *h)
{
        ncm_buf b = NCM_BUF_INIT;
        if (h->nil)
                return strdup("nil");
        for (size_t i = 0; i < h->n; i++) {
                ncm_hint_list l = NCM_HINT_LIST_INIT;
                const ncm_hint_list *use = &h->t[i].list;
                if (h->t[i].desc) {
                        assert_int_equal(ncm_hint_desc_materialize(h->t[i].desc, 1000, &l, NULL),
                                         0);
                        use = &l;
                }
                ncm_buf_printf(&b, "%s%s:", i ? "; " : "", h->t[i].type);
                for (size_t k = 0; k < use->n; k++) {
                        ncm_buf_putc(&b, ' ');
                        ncm_hint_format(&use->hints[k], true, &b);
                }
                ncm_hint_list_done(&l);
        }
        return b.data ? ncm_buf_steal(&b) : strdup("");
}

static char *expected_hints_text(json_object *e)
{
        ncm_buf b = NCM_BUF_INIT;
        size_t i = 0;
        if (!e)
                return strdup("nil");
        json_object_object_foreach(e, type, list)
        {
                ncm_buf_printf(&b, "%s%s:", i++ ? "; " : "", type);
                for (size_t k = 0; k < json_object_array_length(list); k++)
                        ncm_buf_printf(&b, " %s",
                                       json_object_get_string(json_object_array_get_idx(list, k)));
        }
        return b.data ? ncm_buf_steal(&b) : strdup("");
}

static void test_mem_policy_kubelet_hints(void **state)
{
        json_object *cs = cases("hints");
        (void)state;
        for (size_t i = 0; i < json_object_array_length(cs); i++) {
                json_object *tc = json_object_array_get_idx(cs, i);
                const char *desc = json_object_get_string(ncm__json_get(tc, "desc"));
                ncm_topo *t = machine_of(tc);
                ncm_mem_policy *p = policy_of(tc, t);
                ncm_mem_state *s = state_of(tc, "state", "assignments");
                ncm_pod *pod = pod_of(tc);
                ncm_mem_hints h;
                ncm_error err = NCM_ERROR_INIT;
                char *got, *want;
                if (ncm_mem_policy_hints(p, s, pod, &pod->containers[0], 0, &h, &err) < 0)
                        fail_msg("%s: %s", desc, err.msg);
                got = hints_text(&h);
                want = expected_hints_text(ncm__json_get(tc, "expect_hints"));
                if (strcmp(got, want) != 0)
                        fail_msg("%s:\n got %s\nwant %s", desc, got, want);
                free(got);
                free(want);
                ncm_mem_hints_done(&h);
                ncm_pod_free(pod);
                ncm_mem_state_free(s);
                ncm_mem_policy_free(p);
                ncm_topo_free(t);
        }
        cases(NULL);
}

static void test_mem_policy_kubelet_new(void **state)
{
        ncm_topo *t = NULL;
        ncm_cpu_info cpus[] = {{0, 0, 0, 0, 0}, {1, 1, 0, 1, 0}};
        ncm_mem_reservations l = {0};
        ncm_mem_policy_config c = {.policy = "Static", .reserved = &l};
        ncm_mem_policy *p = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_quantity q;
        (void)state;
        assert_int_equal(ncm_topo_new(cpus, 2, NULL, 0, NULL, &t, NULL), 0);
        assert_int_equal(ncm_mem_policy_new(t, &c, &p, &err), -EINVAL);
        assert_string_equal(err.msg, "[memorymanager] you should specify the system reserved "
                                     "memory");
        assert_int_equal(ncm_quantity_parse("512Mi", &q, NULL), 0);
        assert_int_equal(ncm_mem_reservations_add(&l, 1, "memory", &q), 0);
        assert_int_equal(ncm_mem_policy_new(t, &c, &p, &err), 0);
        assert_string_equal(ncm_mem_policy_name(p), "Static");
        ncm_mem_policy_free(p);
        c.policy = "static";
        assert_int_equal(ncm_mem_policy_new(t, &c, &p, &err), -EINVAL);
        assert_string_equal(err.msg, "unknown policy: \"static\"");
        ncm_mem_reservations_done(&l);
        ncm_topo_free(t);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_mem_policy_kubelet_new),
                        cmocka_unit_test(test_mem_policy_kubelet_start),
                        cmocka_unit_test(test_mem_policy_kubelet_allocate),
                        cmocka_unit_test(test_mem_policy_kubelet_allocate_init),
                        cmocka_unit_test(test_mem_policy_kubelet_remove),
                        cmocka_unit_test(test_mem_policy_kubelet_hints),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
