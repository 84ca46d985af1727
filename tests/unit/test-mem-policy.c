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
#include <nodecm/topologymanager.h>
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
        /* the kubelet's tables name containers as Go tests do ("initContainer1") */
        if (tu_pod_parse_as_in_go(b.data, b.len, "pod", &pod, &err) < 0)
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
                if (ncm_mem_policy_hints(p, s, pod, &pod->containers[0], 1 << 20, &h, &err) < 0)
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

/* A machine of N NUMA nodes (one CPU each), MEM bytes per node, HP 1Gi pages per node. */
static ncm_topo *machine_n(int n, uint64_t mem, uint64_t hp)
{
        ncm_cpu_info cpus[64];
        ncm_topo *t = NULL;
        ncm_hugepages pool = {1048576, hp};
        for (int i = 0; i < n; i++)
                cpus[i] = (ncm_cpu_info){i, i, i, i, i};
        assert_int_equal(ncm_topo_new(cpus, (size_t)n, NULL, 0, NULL, &t, NULL), 0);
        for (int i = 0; i < n; i++)
                assert_int_equal(ncm_topo_set_numa_memory(t, i, mem, &pool, hp ? 1 : 0, NULL), 0);
        return t;
}

static ncm_mem_policy *static_policy(const ncm_topo *t, int n, const char *reserved, uint64_t drift)
{
        ncm_mem_reservations l = {0};
        ncm_mem_policy_config c = {.policy = "Static", .reserved = &l, .max_drift = drift};
        ncm_mem_policy *p = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_quantity q;
        assert_int_equal(ncm_quantity_parse(reserved, &q, NULL), 0);
        for (int i = 0; i < n; i++)
                assert_int_equal(ncm_mem_reservations_add(&l, i, "memory", &q), 0);
        if (ncm_mem_policy_new(t, &c, &p, &err) < 0)
                fail_msg("%s", err.msg);
        ncm_mem_reservations_done(&l);
        return p;
}

static ncm_pod *simple_pod(const char *uid, const char *mem, const char *hp)
{
        char text[1024];
        ncm_pod *pod = NULL;
        ncm_error err = NCM_ERROR_INIT;
        snprintf(text, sizeof(text),
                 "{\"metadata\": {\"uid\": \"%s\"}, \"spec\": {\"containers\": [{\"name\": "
                 "\"c\", \"resources\": {\"limits\": {\"cpu\": \"1\", \"memory\": "
                 "\"%s\"%s%s%s}}}]}}",
                 uid, mem, hp ? ", \"hugepages-1Gi\": \"" : "", hp ? hp : "", hp ? "\"" : "");
        if (ncm_pod_parse(text, strlen(text), uid, &pod, &err) < 0)
                fail_msg("%s", err.msg);
        return pod;
}

/* 64 NUMA nodes: the hints of a fresh machine are described, not 2^64 masks listed. */
static void test_mem_policy_many_numa(void **state)
{
        ncm_topo *t = machine_n(64, 8ull << 30, 0);
        ncm_mem_policy *p = static_policy(t, 64, "512Mi", 0);
        ncm_mem_state *s = ncm_mem_state_new("Static");
        ncm_pod *pod = simple_pod("p", "1Gi", NULL), *big = simple_pod("b", "20Gi", NULL);
        ncm_mem_hints h;
        ncm_error err = NCM_ERROR_INIT;
        ncm_hint any = {.any = true}, mine = {0};
        (void)state;
        assert_int_equal(ncm_mem_policy_start(p, s, NULL, &err), 0);
        assert_int_equal(ncm_mem_policy_hints(p, s, pod, &pod->containers[0], 0, &h, &err), 0);
        assert_int_equal(h.n, 1);
        assert_non_null(h.t[0].desc);
        assert_int_equal(ncm_hint_desc_preferred_size(h.t[0].desc), 1);
        assert_true(ncm_hint_desc_contains(h.t[0].desc, UINT64_C(1) << 63, NULL));
        ncm_mem_hints_done(&h);
        /* 20Gi needs 3 nodes (7.5Gi each): the default hint is the lowest such mask */
        assert_int_equal(ncm_mem_policy_allocate(p, s, big, &big->containers[0], &any, NULL, &err),
                         0);
        assert_int_equal(ncm_mem_state_container_numa(s, "b", "c"), 7);
        /* node 0 is in the group [0,1,2]: a hint [0] widens to the whole group, which is not
         * preferred (one node would do) */
        mine.numa = 1;
        mine.preferred = true;
        assert_int_equal(ncm_mem_policy_allocate(p, s, pod, &pod->containers[0], &mine, NULL, &err),
                         -NCM_E_ADMISSION);
        assert_string_equal(err.msg, "[memorymanager] failed to find the extended preferred hint");
        mine.numa = UINT64_C(1) << 40;
        assert_int_equal(ncm_mem_policy_allocate(p, s, pod, &pod->containers[0], &mine, NULL, &err),
                         0);
        assert_int_equal(ncm_mem_state_container_numa(s, "p", "c"), UINT64_C(1) << 40);
        ncm_pod_free(pod);
        ncm_pod_free(big);
        ncm_mem_state_free(s);
        ncm_mem_policy_free(p);
        ncm_topo_free(t);
}

/* The hints of POD as listed (no cap) and as described (a threshold of 4 forces the description;
 * 2^20, the list): the description, extras and walked subsets together, is the same list in the
 * same order. */
static void same_hints_listed_and_described(ncm_mem_policy *p, ncm_mem_state *s, ncm_pod *pod)
{
        ncm_mem_hints listed, described;
        ncm_hint_list l = NCM_HINT_LIST_INIT;
        ncm_error err = NCM_ERROR_INIT;

        assert_int_equal(ncm_mem_policy_hints(p, s, pod, &pod->containers[0], 1 << 20, &listed,
                                              &err),
                         0);
        assert_int_equal(ncm_mem_policy_hints(p, s, pod, &pod->containers[0], 4, &described, &err),
                         0);
        assert_int_equal(listed.n, 1);
        assert_int_equal(described.n, 1);
        if (listed.t[0].list.n <= 4) {
                assert_null(described.t[0].desc);
        } else {
                assert_non_null(described.t[0].desc);
                assert_int_equal(ncm_hint_desc_materialize(described.t[0].desc, 1000, &l, &err), 0);
                assert_int_equal(l.n, listed.t[0].list.n);
                for (size_t i = 0; i < l.n; i++) {
                        assert_int_equal(l.hints[i].numa, listed.t[0].list.hints[i].numa);
                        assert_int_equal(l.hints[i].preferred, listed.t[0].list.hints[i].preferred);
                }
                ncm_hint_list_done(&l);
        }
        ncm_mem_hints_done(&listed);
        ncm_mem_hints_done(&described);
}

/* Used nodes and groups beside unused nodes: described with extras, listed alike. */
static void test_mem_policy_described_extras(void **state)
{
        ncm_topo *t = machine_n(7, 4ull << 30, 0);
        ncm_mem_policy *p = static_policy(t, 7, "512Mi", 0);
        ncm_mem_state *s = ncm_mem_state_new("Static");
        ncm_pod *a = simple_pod("a", "1Gi", NULL), *g = simple_pod("g", "5Gi", NULL);
        ncm_pod *small = simple_pod("s", "1Gi", NULL), *mid = simple_pod("m", "2500Mi", NULL);
        ncm_pod *big = simple_pod("b", "4Gi", NULL);
        ncm_error err = NCM_ERROR_INIT;
        ncm_hint h1 = {.numa = 2, .preferred = true}, h56 = {.numa = 0x60};
        (void)state;
        assert_int_equal(ncm_mem_policy_start(p, s, NULL, &err), 0);
        same_hints_listed_and_described(p, s, small);
        /* node 1 serves a single-node allocation, [5,6] a group */
        assert_int_equal(ncm_mem_policy_allocate(p, s, a, &a->containers[0], &h1, NULL, &err), 0);
        assert_int_equal(ncm_mem_policy_allocate(p, s, g, &g->containers[0], &h56, NULL, &err), 0);
        same_hints_listed_and_described(p, s, small);
        same_hints_listed_and_described(p, s, mid);
        same_hints_listed_and_described(p, s, big);
        ncm_pod_free(a);
        ncm_pod_free(g);
        ncm_pod_free(small);
        ncm_pod_free(mid);
        ncm_pod_free(big);
        ncm_mem_state_free(s);
        ncm_mem_policy_free(p);
        ncm_topo_free(t);
}

/* 64 NUMA nodes, half of them serving pods: the hints are still described (the used nodes as
 * extras), not refused for their number. */
static void test_mem_policy_many_numa_half_used(void **state)
{
        ncm_topo *t = machine_n(64, 8ull << 30, 0);
        ncm_mem_policy *p = static_policy(t, 64, "512Mi", 0);
        ncm_mem_state *s = ncm_mem_state_new("Static");
        ncm_pod *pod = simple_pod("p", "1Gi", NULL);
        ncm_mem_hints h;
        ncm_error err = NCM_ERROR_INIT;
        bool pref;
        (void)state;
        assert_int_equal(ncm_mem_policy_start(p, s, NULL, &err), 0);
        for (int i = 0; i < 32; i++) {
                char uid[16];
                ncm_pod *f;
                ncm_hint one = {.numa = UINT64_C(1) << (2 * i), .preferred = true};
                snprintf(uid, sizeof(uid), "f%d", i);
                f = simple_pod(uid, "2Gi", NULL);
                assert_int_equal(ncm_mem_policy_allocate(p, s, f, &f->containers[0], &one, NULL,
                                                         &err),
                                 0);
                ncm_pod_free(f);
        }
        assert_int_equal(ncm_mem_policy_hints(p, s, pod, &pod->containers[0], 0, &h, &err), 0);
        assert_int_equal(h.n, 1);
        assert_non_null(h.t[0].desc);
        assert_int_equal(ncm_hint_desc_n_extras(h.t[0].desc), 32);
        assert_int_equal(ncm_hint_desc_narrowest(h.t[0].desc), 1);
        assert_true(ncm_hint_desc_contains(h.t[0].desc, 1, &pref) && pref);
        /* a used node cannot join a multi-node hint; two unused ones can */
        assert_false(ncm_hint_desc_contains(h.t[0].desc, 3, NULL));
        assert_true(ncm_hint_desc_contains(h.t[0].desc, 0xa, &pref) && !pref);
        ncm_mem_hints_done(&h);
        ncm_pod_free(pod);
        ncm_mem_state_free(s);
        ncm_mem_policy_free(p);
        ncm_topo_free(t);
}

/* splitmix64: the differential test below draws from a fixed seed. */
static uint64_t mix_next(uint64_t *x)
{
        uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return z ^ (z >> 31);
}

static unsigned mix_below(uint64_t *x, unsigned n)
{
        return (unsigned)(mix_next(x) % n);
}

/* The memory manager's map as the topology manager gets it (node-memory.c's provider). */
static void mem_to_tm(ncm_mem_hints *h, ncm_tm_hints *ret)
{
        for (size_t i = 0; !h->nil && i < h->n; i++) {
                if (h->t[i].desc) {
                        assert_int_equal(ncm_tm_hints_add_desc(ret, h->t[i].type, h->t[i].desc,
                                                               NULL),
                                         0);
                        h->t[i].desc = NULL;
                } else {
                        assert_int_equal(ncm_tm_hints_add(ret, h->t[i].type, h->t[i].list.hints,
                                                          h->t[i].list.n, false, NULL, NULL),
                                         0);
                }
        }
}

/*
 * Memory and hugepages asked for at once, on 4..16 NUMA nodes of various free amounts, some
 * nodes serving pods alone or as groups: the description (every type a dimension) lists what
 * the kubelet's walk lists, type for type, and the lazy merge of the descriptions gives what
 * the merge of the lists gives (the kubelet's cross product too, where it is small).
 */
static void test_mem_policy_multi_type_described(void **state)
{
        uint64_t seed = 21;
        int described = 0;
        (void)state;
        for (int iter = 0; iter < 120; iter++) {
                int n = 4 + (int)mix_below(&seed, 13);
                ncm_cpu_info cpus[16];
                ncm_topo *t = NULL;
                ncm_mem_policy *p;
                ncm_mem_state *s = ncm_mem_state_new("Static");
                ncm_error err = NCM_ERROR_INIT;
                ncm_mem_hints listed, desc;
                ncm_tm_hints lp = NCM_TM_HINTS_INIT, dp = NCM_TM_HINTS_INIT;
                ncm_tm_options o = {iter % 2 == 1, 64};
                ncm_tm_policy *tp = NULL;
                uint64_t dist[16 * 16];
                int ids[16];
                ncm_pod *pod;
                char mem[32], hp[32];

                for (int i = 0; i < n; i++)
                        cpus[i] = (ncm_cpu_info){i, i, i, i, i};
                assert_int_equal(ncm_topo_new(cpus, (size_t)n, NULL, 0, NULL, &t, NULL), 0);
                for (int i = 0; i < n; i++) {
                        ncm_hugepages pool = {1048576, mix_below(&seed, 5)};
                        uint64_t gib = pool.num_pages + 1 +
                                       mix_below(&seed, 6); /* pages included */
                        assert_int_equal(ncm_topo_set_numa_memory(t, i, gib << 30, &pool, 1, NULL),
                                         0);
                        ids[i] = i;
                        for (int j = 0; j < n; j++)
                                dist[i * n + j] = i == j ? 10
                                                         : 10 + (uint64_t)(i > j ? i - j : j - i);
                }
                p = static_policy(t, n, "256Mi", 0);
                assert_int_equal(ncm_mem_policy_start(p, s, NULL, &err), 0);
                /* a few nodes serve pods: single nodes and two-node groups */
                for (int k = 0, m = (int)mix_below(&seed, 4); k < m; k++) {
                        char uid[16];
                        int a = (int)mix_below(&seed, (unsigned)n), b = (a + 1) % n;
                        bool group = mix_below(&seed, 2) == 1;
                        ncm_hint h = {.numa = (UINT64_C(1) << a) | (group ? UINT64_C(1) << b : 0),
                                      .preferred = !group};
                        ncm_pod *f;
                        int r;
                        snprintf(uid, sizeof(uid), "f%d", k);
                        f = simple_pod(uid, group ? "1536Mi" : "512Mi", NULL);
                        r = ncm_mem_policy_allocate(p, s, f, &f->containers[0], &h, NULL, &err);
                        assert_true(r == 0 || r == -NCM_E_ADMISSION);
                        ncm_pod_free(f);
                }
                snprintf(mem, sizeof(mem), "%uMi", 256 * (1 + mix_below(&seed, 24)));
                snprintf(hp, sizeof(hp), "%uGi", 1 + mix_below(&seed, 6));
                pod = simple_pod("p", mem, hp);
                assert_int_equal(ncm_mem_policy_hints(p, s, pod, &pod->containers[0], 1 << 20,
                                                      &listed, &err),
                                 0);
                if (ncm_mem_policy_hints(p, s, pod, &pod->containers[0], 4, &desc, &err) < 0)
                        fail_msg("%s", err.msg);
                assert_int_equal(listed.n, desc.n);
                for (size_t i = 0; i < listed.n; i++) {
                        ncm_hint_list l = NCM_HINT_LIST_INIT;
                        assert_string_equal(listed.t[i].type, desc.t[i].type);
                        assert_null(listed.t[i].desc);
                        if (!desc.t[i].desc) {
                                /* few subsets of U: listed both times */
                                assert_int_equal(desc.t[i].list.n, listed.t[i].list.n);
                                for (size_t j = 0; j < desc.t[i].list.n; j++) {
                                        assert_int_equal(desc.t[i].list.hints[j].numa,
                                                         listed.t[i].list.hints[j].numa);
                                        assert_int_equal(desc.t[i].list.hints[j].preferred,
                                                         listed.t[i].list.hints[j].preferred);
                                }
                                continue;
                        }
                        described++;
                        assert_int_equal(ncm_hint_desc_materialize(desc.t[i].desc, 1 << 20, &l,
                                                                   &err),
                                         0);
                        assert_int_equal(l.n, listed.t[i].list.n);
                        for (size_t j = 0; j < l.n; j++) {
                                assert_int_equal(l.hints[j].numa, listed.t[i].list.hints[j].numa);
                                assert_int_equal(l.hints[j].preferred,
                                                 listed.t[i].list.hints[j].preferred);
                        }
                        ncm_hint_list_done(&l);
                }
                assert_int_equal(ncm_tm_policy_new(iter % 3 == 0 ? "best-effort" : "restricted", &o,
                                                   ids, (size_t)n, dist, &tp, NULL),
                                 0);
                {
                        size_t product = 1;
                        ncm_hint want, got, ref;
                        bool want_ok, got_ok, ref_ok;
                        for (size_t i = 0; i < listed.n; i++)
                                product *= listed.t[i].list.n + 1;
                        mem_to_tm(&listed, &lp);
                        mem_to_tm(&desc, &dp);
                        assert_int_equal(ncm_tm_policy_merge(tp, &lp, 1, NCM_TM_MERGE_FAST, &want,
                                                             &want_ok, NULL),
                                         0);
                        assert_int_equal(ncm_tm_policy_merge(tp, &dp, 1, NCM_TM_MERGE_LAZY, &got,
                                                             &got_ok, NULL),
                                         0);
                        assert_int_equal(got.numa, want.numa);
                        assert_int_equal(got.any, want.any);
                        assert_int_equal(got.preferred, want.preferred);
                        assert_int_equal(got_ok, want_ok);
                        if (product <= 20000) {
                                assert_int_equal(ncm_tm_policy_merge(tp, &lp, 1,
                                                                     NCM_TM_MERGE_REFERENCE, &ref,
                                                                     &ref_ok, NULL),
                                                 0);
                                assert_int_equal(ref.numa, want.numa);
                                assert_int_equal(ref.preferred, want.preferred);
                        }
                }
                ncm_tm_hints_done(&lp);
                ncm_tm_hints_done(&dp);
                ncm_tm_policy_free(tp);
                ncm_mem_hints_done(&listed);
                ncm_mem_hints_done(&desc);
                ncm_pod_free(pod);
                ncm_mem_state_free(s);
                ncm_mem_policy_free(p);
                ncm_topo_free(t);
        }
        /* the draw must reach the described path often, not by luck */
        assert_true(described > 60);
}

/* 64 NUMA nodes, memory and hugepages together: described, not refused for their number. */
static void test_mem_policy_many_numa_multi_type(void **state)
{
        ncm_topo *t = machine_n(64, 8ull << 30, 4);
        ncm_mem_policy *p = static_policy(t, 64, "512Mi", 0);
        ncm_mem_state *s = ncm_mem_state_new("Static");
        ncm_pod *pod = simple_pod("p", "10Gi", "6Gi");
        ncm_mem_hints h;
        ncm_error err = NCM_ERROR_INIT;
        bool pref;
        (void)state;
        assert_int_equal(ncm_mem_policy_start(p, s, NULL, &err), 0);
        assert_int_equal(ncm_mem_policy_hints(p, s, pod, &pod->containers[0], 0, &h, &err), 0);
        assert_int_equal(h.n, 2);
        for (size_t i = 0; i < 2; i++) {
                assert_non_null(h.t[i].desc);
                /* 10Gi needs 3 nodes of 3.5Gi (8Gi less 4Gi of pages and 512Mi), 6Gi of
                 * hugepages 2 nodes of 4Gi: 3 */
                assert_int_equal(ncm_hint_desc_preferred_size(h.t[i].desc), 3);
                assert_int_equal(ncm_hint_desc_narrowest(h.t[i].desc), 3);
                assert_true(ncm_hint_desc_contains(h.t[i].desc, 7, &pref) && pref);
                assert_false(ncm_hint_desc_contains(h.t[i].desc, 3, NULL));
        }
        ncm_mem_hints_done(&h);
        ncm_pod_free(pod);
        ncm_mem_state_free(s);
        ncm_mem_policy_free(p);
        ncm_topo_free(t);
}

/* A mark puts back the machine state and the pod's entry, for a new pod and a known one. */
static void test_mem_state_mark(void **state)
{
        ncm_topo *t = machine_n(2, 4ull << 30, 0);
        ncm_mem_policy *p = static_policy(t, 2, "512Mi", 0);
        ncm_mem_state *s = ncm_mem_state_new("Static"), *before;
        ncm_pod *a = simple_pod("a", "1Gi", NULL), *b = simple_pod("b", "1Gi", NULL);
        ncm_mem_state_mark *m = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_hint h0 = {.numa = 1, .preferred = true}, h1 = {.numa = 2, .preferred = true};
        (void)state;
        assert_int_equal(ncm_mem_policy_start(p, s, NULL, &err), 0);
        assert_int_equal(ncm_mem_policy_allocate(p, s, a, &a->containers[0], &h0, NULL, &err), 0);
        for (int known = 0; known < 2; known++) {
                ncm_pod *x = known ? a : b;
                before = ncm_mem_state_dup(s);
                assert_non_null(before);
                assert_int_equal(ncm_mem_state_mark_pod(s, x->uid, &m), 0);
                assert_true(ncm_mem_state_mark_unchanged(s, m));
                if (known) /* the known pod's container gets other blocks */
                        assert_int_equal(ncm_mem_policy_remove(p, s, "a", "c"), 1);
                assert_int_equal(ncm_mem_policy_allocate(p, s, x, &x->containers[0], &h1, NULL,
                                                         &err),
                                 0);
                assert_false(ncm_mem_state_mark_unchanged(s, m));
                assert_false(ncm_mem_state_equal(s, before));
                ncm_mem_state_mark_restore(s, m);
                m = ncm_mem_state_mark_free(m);
                assert_true(ncm_mem_state_equal(s, before));
                ncm_mem_state_free(before);
        }
        ncm_pod_free(a);
        ncm_pod_free(b);
        ncm_mem_state_free(s);
        ncm_mem_policy_free(p);
        ncm_topo_free(t);
}

/* The group rule refuses a mask, and says why. */
static void test_mem_policy_group_rule_explained(void **state)
{
        ncm_topo *t = machine_n(2, 4ull << 30, 0);
        ncm_mem_policy *p = static_policy(t, 2, "512Mi", 0);
        ncm_mem_state *s = ncm_mem_state_new("Static");
        ncm_pod *a = simple_pod("a", "1Gi", NULL), *b = simple_pod("b", "1Gi", NULL);
        ncm_error err = NCM_ERROR_INIT;
        ncm_hint h0 = {.numa = 1, .preferred = true}, h01 = {.numa = 3};
        ncm_buf why = NCM_BUF_INIT;
        (void)state;
        assert_int_equal(ncm_mem_policy_start(p, s, NULL, &err), 0);
        assert_int_equal(ncm_mem_policy_allocate(p, s, a, &a->containers[0], &h0, NULL, &err), 0);
        assert_int_equal(ncm_mem_policy_allocate(p, s, b, &b->containers[0], &h01, NULL, &err),
                         -NCM_E_ADMISSION);
        assert_string_equal(err.msg,
                            "[memorymanager] preferred hint violates NUMA node allocation");
        assert_true(ncm_mem_explain_mask(s, 3, &why));
        assert_string_equal(why.data, "NUMA node 0 serves 1 single-node allocation(s), so it "
                                      "cannot join the multi-node group [0,1] (the memory "
                                      "manager's group rule)");
        ncm_buf_done(&why);
        assert_false(ncm_mem_explain_mask(s, 2, NULL));
        ncm_pod_free(a);
        ncm_pod_free(b);
        ncm_mem_state_free(s);
        ncm_mem_policy_free(p);
        ncm_topo_free(t);
}

/* Sidecars count as long-running in pod-scope requests; pod-scope hints use the pod's sum. */
static void test_mem_policy_pod_scope_sidecar(void **state)
{
        static const char text[] =
                        "{\"metadata\": {\"uid\": \"s\"}, \"spec\": {\"initContainers\": ["
                        "{\"name\": \"init\", \"resources\": {\"limits\": {\"cpu\": \"1\", "
                        "\"memory\": "
                        "\"3Gi\"}}},"
                        "{\"name\": \"side\", \"restartPolicy\": \"Always\", \"resources\": "
                        "{\"limits\": "
                        "{\"cpu\": \"1\", \"memory\": \"1Gi\"}}}],"
                        "\"containers\": [{\"name\": \"app\", \"resources\": {\"limits\": "
                        "{\"cpu\": "
                        "\"1\", \"memory\": \"2Gi\"}}}]}}";
        ncm_pod *pod = NULL;
        ncm_mem_request r;
        ncm_topo *t = machine_n(2, 4ull << 30, 0);
        ncm_mem_policy *p = static_policy(t, 2, "512Mi", 0);
        ncm_mem_state *s = ncm_mem_state_new("Static");
        ncm_mem_hints h;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        assert_int_equal(ncm_pod_parse(text, sizeof(text) - 1, "pod", &pod, &err), 0);
        assert_int_equal(ncm_mem_request_of(pod, NULL, &r, &err), 0);
        /* max(init 3Gi, app 2Gi + sidecar 1Gi) = 3Gi */
        assert_int_equal(r.n, 1);
        assert_int_equal(r.bytes[0], 3ull << 30);
        ncm_mem_request_done(&r);
        assert_int_equal(ncm_mem_policy_start(p, s, NULL, &err), 0);
        assert_int_equal(ncm_mem_policy_hints(p, s, pod, NULL, 0, &h, &err), 0);
        /* 3Gi fits one node (3.5Gi allocatable): [0]* [1]* [0,1] */
        assert_int_equal(h.n, 1);
        assert_int_equal(h.t[0].list.n, 3);
        assert_true(h.t[0].list.hints[0].preferred);
        assert_false(h.t[0].list.hints[2].preferred);
        ncm_mem_hints_done(&h);
        ncm_pod_free(pod);
        ncm_mem_state_free(s);
        ncm_mem_policy_free(p);
        ncm_topo_free(t);
}

/* KEP-6232: a drift within the bound is accepted and re-baselined; beyond it, or an assignment
 * that no longer fits, the start fails; without the option the kubelet's exact comparison. */
static void test_mem_policy_drift(void **state)
{
        ncm_topo *t = machine_n(2, 4ull << 30, 1), *t2 = machine_n(2, (4ull << 30) - 12288, 1);
        ncm_topo *t3 = machine_n(2, (4ull << 30) - (512ull << 20), 1);
        ncm_mem_policy *p = static_policy(t, 2, "512Mi", 0);
        ncm_mem_policy *exact = static_policy(t2, 2, "512Mi", 0);
        ncm_mem_policy *tolerant = static_policy(t2, 2, "512Mi", 128ull << 20);
        ncm_mem_policy *tolerant3 = static_policy(t3, 2, "512Mi", 128ull << 20);
        ncm_mem_state *s = ncm_mem_state_new("Static"), *c;
        ncm_pod *pod = simple_pod("p", "2Gi", "1Gi");
        ncm_hint h0 = {.numa = 1, .preferred = true};
        ncm_error err = NCM_ERROR_INIT;
        bool drifted = false;
        (void)state;
        assert_int_equal(ncm_mem_policy_start(p, s, NULL, &err), 0);
        assert_int_equal(ncm_mem_policy_allocate(p, s, pod, &pod->containers[0], &h0, NULL, &err),
                         0);
        c = ncm_mem_state_dup(s);
        assert_int_equal(ncm_mem_policy_start(exact, c, NULL, &err), -NCM_E_INVALID_STATE);
        assert_string_equal(err.msg, "[memorymanager] the expected machine state is different "
                                     "from the real one");
        assert_int_equal(ncm_mem_policy_start(tolerant, c, &drifted, &err), 0);
        assert_true(drifted);
        assert_int_equal(ncm_mem_node_table(ncm_mem_state_node(c, 0), "memory")->total,
                         (4ull << 30) - 12288);
        assert_int_equal(ncm_mem_node_table(ncm_mem_state_node(c, 0), "memory")->reserved,
                         2ull << 30);
        /* re-baselined: an exact start on that machine now passes */
        assert_int_equal(ncm_mem_policy_start(exact, c, &drifted, &err), 0);
        assert_false(drifted);
        ncm_mem_state_free(c);
        /* 512Mi less: beyond the 128Mi bound */
        c = ncm_mem_state_dup(s);
        assert_int_equal(ncm_mem_policy_start(tolerant3, c, &drifted, &err), -NCM_E_INVALID_STATE);
        ncm_mem_state_free(c);
        ncm_pod_free(pod);
        ncm_mem_state_free(s);
        ncm_mem_policy_free(p);
        ncm_mem_policy_free(exact);
        ncm_mem_policy_free(tolerant);
        ncm_mem_policy_free(tolerant3);
        ncm_topo_free(t);
        ncm_topo_free(t2);
        ncm_topo_free(t3);
}

/* KEP-6232's derived bound from /proc/iomem: the kernel image's span. */
static void test_mem_policy_kernel_image_span(void **state)
{
        static const char iomem[] = "00000000-00000fff : Reserved\n"
                                    "00100000-bffdffff : System RAM\n"
                                    "  1c000000-1d0031d6 : Kernel code\n"
                                    "  1d200000-1d9fffff : Kernel rodata\n"
                                    "  1da00000-1dd7e5ff : Kernel data\n"
                                    "  1e2f3000-1e5fffff : Kernel bss\n";
        static const char zeroed[] = "00000000-00000000 : System RAM\n"
                                     "  00000000-00000000 : Kernel code\n"
                                     "  00000000-00000000 : Kernel bss\n";
        uint64_t span = 0;
        (void)state;
        assert_int_equal(ncm_mem_kernel_image_span(iomem, sizeof(iomem) - 1, &span), 0);
        assert_int_equal(span, 0x1e5fffffull - 0x1c000000ull + 1);
        assert_int_equal(ncm_mem_kernel_image_span(zeroed, sizeof(zeroed) - 1, &span), -ENOENT);
        assert_int_equal(ncm_mem_kernel_image_span("", 0, &span), -ENOENT);
        assert_int_equal(ncm_mem_kernel_image_span("garbage : Kernel code\n", 22, &span), -ENOENT);
}

/* --reserved-memory and reservedMemory's validation, with the kubelet's texts. */
static void test_mem_policy_reservations(void **state)
{
        static const struct {
                const char *flag;
                const char *msg;
        } bad[] = {
                        {"0", "the reserved memory has incorrect format, expected "
                              "numaNodeID:type=quantity[,type=quantity...], got 0"},
                        {"0:1:memory=1Gi", "the reserved memory has incorrect format"},
                        {"x:memory=1Gi",
                         "failed to convert the NUMA node ID, exptected integer, got x"},
                        {"0:memory",
                         "the reserved limit has incorrect value, expected type=quantatity, "
                         "got memory"},
                        {"0:cpu=1", "memory type conversion error, unknown type: \"cpu\""},
                        {"0:memory=lots",
                         "failed to parse the quantatity, expected quantatity, got lots"},
        };
        ncm_mem_reservations l = {0};
        ncm_error err = NCM_ERROR_INIT;
        ncm_quantity q;
        (void)state;
        for (size_t i = 0; i < NCM_ELEMENTSOF(bad); i++) {
                assert_int_equal(ncm_mem_reservations_parse_flag(bad[i].flag, &l, &err), -EINVAL);
                if (!strstr(err.msg, bad[i].msg))
                        fail_msg("%s: %s", bad[i].flag, err.msg);
        }
        ncm_mem_reservations_done(&l);
        assert_int_equal(ncm_mem_reservations_parse_flag(
                                         "0:memory=1Gi,hugepages-1Gi=2Gi;1:memory=2Gi", &l, &err),
                         0);
        assert_int_equal(l.n, 3);
        assert_int_equal(l.r[1].bytes, 2ull << 30);
        assert_int_equal(l.r[2].numa, 1);
        assert_int_equal(ncm_mem_reservations_validate(&l, &err), 0);
        assert_int_equal(ncm_mem_reservations_parse_flag("1:memory=1Gi", &l, &err), 0);
        assert_int_equal(ncm_mem_reservations_validate(&l, &err), -EINVAL);
        assert_string_equal(err.msg, "invalid configuration: the reserved memory has a duplicate "
                                     "value for NUMA node 1 and resource \"memory\"");
        assert_int_equal(ncm_mem_reservations_parse_flag("", &l, &err), 0);
        assert_int_equal(l.n, 0);
        assert_int_equal(ncm_quantity_parse("0", &q, NULL), 0);
        assert_int_equal(ncm_mem_reservations_add(&l, 0, "memory", &q), 0);
        assert_int_equal(ncm_mem_reservations_validate(&l, &err), -EINVAL);
        assert_string_equal(err.msg, "invalid configuration: reserved memory may not be zero for "
                                     "NUMA node 0 and resource \"memory\"");
        ncm_mem_reservations_done(&l);
        assert_int_equal(ncm_quantity_parse("1", &q, NULL), 0);
        assert_int_equal(ncm_mem_reservations_add(&l, 0, "blabla", &q), 0);
        assert_int_equal(ncm_mem_reservations_validate(&l, &err), -EINVAL);
        assert_string_equal(err.msg, "invalid configuration: the limit type \"blabla\" for NUMA "
                                     "node 0 is not supported, only [memory "
                                     "hugepages-<HugePageSize>] is accepted");
        ncm_mem_reservations_done(&l);
}

/* validateReservedMemory against Node Allocatable: the sum must be equal, with the kubelet's
 * quantities in its message; a node the machine lacks is refused first. */
static void test_mem_policy_reserved_vs_allocatable(void **state)
{
        ncm_topo *t = machine_n(2, 4ull << 30, 0);
        ncm_mem_reservations l = {0};
        ncm_resource item = {.name = (char *)"memory"};
        ncm_resource_list na = {&item, 1};
        ncm_mem_policy_config c = {.policy = "Static", .reserved = &l, .node_allocatable = &na};
        ncm_mem_policy *p = NULL;
        ncm_error err = NCM_ERROR_INIT;
        (void)state;
        assert_int_equal(ncm_quantity_parse("1124Mi", &item.quantity, NULL), 0);
        assert_int_equal(ncm_mem_reservations_parse_flag("0:memory=562Mi;1:memory=500Mi", &l, &err),
                         0);
        assert_int_equal(ncm_mem_policy_new(t, &c, &p, &err), -EINVAL);
        assert_string_equal(err.msg, "the total amount \"1062Mi\" of type \"memory\" is not equal "
                                     "to the value \"1124Mi\" determined by Node Allocatable "
                                     "feature");
        ncm_mem_reservations_done(&l);
        assert_int_equal(ncm_mem_reservations_parse_flag("0:memory=562Mi;3:memory=562Mi", &l, &err),
                         0);
        assert_int_equal(ncm_mem_policy_new(t, &c, &p, &err), -EINVAL);
        assert_string_equal(err.msg, "the reserved memory configuration references a NUMA node 3 "
                                     "that does not exist on this machine");
        ncm_mem_reservations_done(&l);
        assert_int_equal(ncm_mem_reservations_parse_flag("0:memory=562Mi;1:memory=562Mi", &l, &err),
                         0);
        assert_int_equal(ncm_mem_policy_new(t, &c, &p, &err), 0);
        ncm_mem_policy_free(p);
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
                        cmocka_unit_test(test_mem_policy_many_numa),
                        cmocka_unit_test(test_mem_policy_group_rule_explained),
                        cmocka_unit_test(test_mem_policy_pod_scope_sidecar),
                        cmocka_unit_test(test_mem_policy_described_extras),
                        cmocka_unit_test(test_mem_policy_many_numa_half_used),
                        cmocka_unit_test(test_mem_policy_multi_type_described),
                        cmocka_unit_test(test_mem_policy_many_numa_multi_type),
                        cmocka_unit_test(test_mem_state_mark),
                        cmocka_unit_test(test_mem_policy_drift),
                        cmocka_unit_test(test_mem_policy_kernel_image_span),
                        cmocka_unit_test(test_mem_policy_reservations),
                        cmocka_unit_test(test_mem_policy_reserved_vs_allocatable),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
