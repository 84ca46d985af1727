/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The device manager's hints as descriptions (ncm_devmgr_*_hints_describe): listed, each
 * described entry must be exactly the list ncm_devmgr_*_hints() generates, and the other
 * entries (nil, empty) the same. Random machines (NUMA ids scattered, unsorted, none), random
 * devices (healthy or not, on one node, several, foreign ids, no topology, empty topology),
 * allocations (so that some devices are in use, reusable by a pod's app containers, or already
 * held by the container asking), in container and pod scope; under kubelet 1.36's walk of
 * every machine node and 1.37's walk of the resource's device nodes. Across the two
 * generations: 1.37's list is 1.36's without the masks that hold a device-less node, in the
 * same order with the same flags.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/devicemanager.h>
#include <nodecm/hintdesc.h>
#include "testutil.h"

typedef struct rng {
        uint64_t s;
} rng;

static uint64_t next(rng *r)
{
        uint64_t z = (r->s += UINT64_C(0x9e3779b97f4a7c15));
        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return z ^ (z >> 31);
}

static unsigned below(rng *r, unsigned n)
{
        return (unsigned)(next(r) % n);
}

static const char *const resources[] = {"example.com/gpu", "example.com/nic"};

static size_t described, listed_hints;

static void same_entries(const ncm_devmgr_hints *want, const ncm_devmgr_hints *got)
{
        assert_int_equal(got->n, want->n);
        for (size_t i = 0; i < want->n; i++) {
                const ncm_devmgr_resource_hints *w = &want->v[i], *g = &got->v[i];
                ncm_hint_list l = NCM_HINT_LIST_INIT;
                assert_string_equal(g->resource, w->resource);
                assert_null(w->desc);
                if (g->desc) {
                        assert_int_equal(g->hints.n, 0);
                        assert_int_equal(ncm_hint_desc_materialize(g->desc, 1 << 20, &l, NULL), 0);
                        described++;
                        listed_hints += l.n;
                } else {
                        l = g->hints;
                }
                assert_int_equal(l.nil, w->hints.nil);
                assert_int_equal(l.n, w->hints.n);
                for (size_t k = 0; k < l.n; k++) {
                        assert_int_equal(l.hints[k].numa, w->hints.hints[k].numa);
                        assert_int_equal(l.hints[k].preferred, w->hints.hints[k].preferred);
                }
                if (g->desc)
                        ncm_hint_list_done(&l);
        }
}

/* DEV_NODES[res] (may be NULL): the machine nodes some device of the resource reports. */
static ncm_devmgr *random_manager(rng *r, int *numa, size_t *n_numa, ncm_kubelet_version v,
                                  ncm_bitmask *dev_nodes)
{
        ncm_devmgr_config cfg = {.kubelet_version = v};
        ncm_devmgr *m = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_bitmask used = 0;

        *n_numa = below(r, 9);
        for (size_t i = 0; i < *n_numa;) {
                int id = below(r, 4) == 0 ? (int)below(r, 64) : (int)i;
                if (used & (UINT64_C(1) << id))
                        continue;
                used |= UINT64_C(1) << id;
                numa[i++] = id;
        }
        cfg.numa_nodes = numa;
        cfg.n_numa_nodes = *n_numa;
        assert_int_equal(ncm_devmgr_new(&cfg, &m, &err), 0);
        for (size_t res = 0; res < 2; res++) {
                ncm_devmgr_device devs[10];
                int64_t nodes[10][3];
                char ids[10][24];
                uint64_t ep = 0;
                size_t n = 1 + below(r, 9);
                for (size_t d = 0; d < n; d++) {
                        size_t k = below(r, 4) == 0 ? below(r, 4) : 1;
                        for (size_t j = 0; j < k; j++) {
                                unsigned kind = below(r, 20);
                                nodes[d][j] = kind == 0   ? 99
                                              : kind == 1 ? -3
                                              : *n_numa   ? numa[below(r, (unsigned)*n_numa)]
                                                          : 0;
                        }
                        snprintf(ids[d], sizeof(ids[d]), "d%zu", d);
                        devs[d] = (ncm_devmgr_device){ids[d],
                                                      below(r, 8) == 0 ? "Unhealthy" : "Healthy",
                                                      below(r, 12) != 0, nodes[d], k};
                        if (!devs[d].topology)
                                devs[d].n_numa = 0;
                        for (size_t j = 0; dev_nodes && j < devs[d].n_numa; j++)
                                if (nodes[d][j] >= 0 && nodes[d][j] < 64 &&
                                    (used & (UINT64_C(1) << nodes[d][j])))
                                        dev_nodes[res] |= UINT64_C(1) << nodes[d][j];
                }
                assert_int_equal(ncm_devmgr_plugin_connect(m, resources[res],
                                                           &ncm_devmgr_standin_ops, NULL, NULL, &ep,
                                                           &err),
                                 0);
                assert_int_equal(ncm_devmgr_update_devices(m, resources[res], ep, devs, n, &err),
                                 0);
        }
        return m;
}

static void compare_container(ncm_devmgr *m, const char *pod, const ncm_devmgr_container *c)
{
        ncm_devmgr_hints want = NCM_DEVMGR_HINTS_INIT, got = NCM_DEVMGR_HINTS_INIT;
        ncm_error err = NCM_ERROR_INIT;
        int a = ncm_devmgr_container_hints(m, pod, c, &want, &err);
        int b = ncm_devmgr_container_hints_describe(m, pod, c, &got, &err);
        assert_int_equal(a, b);
        if (a == 0)
                same_entries(&want, &got);
        ncm_devmgr_hints_done(&want);
        ncm_devmgr_hints_done(&got);
}

static void test_device_hints_desc_random(void **state)
{
        rng r = {41};
        (void)state;
        for (int iter = 0; iter < 1500; iter++) {
                int numa[64];
                size_t n_numa;
                ncm_kubelet_version v = iter % 2 ? NCM_KUBELET_VERSION_DEFAULT
                                                 : (ncm_kubelet_version){1, 36};
                ncm_devmgr *m = random_manager(&r, numa, &n_numa, v, NULL);
                ncm_devmgr_resource req[2];
                ncm_devmgr_container c = {"app", NCM_DEVMGR_APP_CONTAINER, req, 2};
                ncm_devmgr_container init = {"init", NCM_DEVMGR_INIT_CONTAINER, req, 2};
                ncm_devmgr_container ic[1], ac[2];
                ncm_devmgr_pod pod = {"p", ic, 1, ac, 2};
                ncm_devmgr_hints want = NCM_DEVMGR_HINTS_INIT, got = NCM_DEVMGR_HINTS_INIT;
                ncm_error err = NCM_ERROR_INIT;

                for (int k = 0; k < 2; k++) {
                        int64_t n = (int64_t)below(&r, 4);
                        req[k] = (ncm_devmgr_resource){resources[k], n, n};
                }
                /* some devices go to another pod, some to p's init container (reusable) */
                if (below(&r, 2)) {
                        ncm_hint any = {0, true, false};
                        ncm_devmgr_container other = {"x", NCM_DEVMGR_APP_CONTAINER, req, 2};
                        (void)ncm_devmgr_allocate(m, "q", &other, &any, &err);
                }
                if (below(&r, 2)) {
                        ncm_hint aff = {n_numa ? UINT64_C(1) << numa[0] : 0, n_numa == 0, true};
                        (void)ncm_devmgr_allocate(m, "p", &init, &aff, &err);
                }
                for (int k = 0; k < 2; k++) {
                        int64_t n = (int64_t)below(&r, 5);
                        req[k] = (ncm_devmgr_resource){resources[k], n, n};
                }
                compare_container(m, "p", &c);
                compare_container(m, "q", &c);
                /* a container that holds devices already asks again (kubelet restart) */
                compare_container(m, "q", &(ncm_devmgr_container){"x", 0, req, 2});
                compare_container(m, "p", &init);

                ic[0] = init;
                ac[0] = c;
                ac[1] = (ncm_devmgr_container){"app2", NCM_DEVMGR_APP_CONTAINER, req, 1};
                assert_int_equal(ncm_devmgr_pod_hints(m, &pod, &want, &err),
                                 ncm_devmgr_pod_hints_describe(m, &pod, &got, &err));
                same_entries(&want, &got);
                ncm_devmgr_hints_done(&want);
                ncm_devmgr_hints_done(&got);
                ncm_devmgr_free(m);
        }
        printf("# %zu described lists, %zu hints\n", described, listed_hints);
        assert_true(described > 3000);
}

/* WANT's hints without the masks that leave DEV (1.36's list filtered), equal to GOT's. */
static void filtered_equal(const ncm_hint_list *old, ncm_bitmask dev, const ncm_hint_list *got,
                           size_t *dropped)
{
        size_t k = 0;
        assert_int_equal(got->nil, old->nil);
        for (size_t i = 0; i < old->n; i++) {
                if (old->hints[i].numa & ~dev) {
                        (*dropped)++;
                        continue;
                }
                assert_true(k < got->n);
                assert_int_equal(got->hints[k].numa, old->hints[i].numa);
                assert_int_equal(got->hints[k].preferred, old->hints[i].preferred);
                k++;
        }
        assert_int_equal(k, got->n);
}

static void test_device_hints_desc_generations(void **state)
{
        rng r = {7};
        size_t dropped = 0, compared = 0;
        (void)state;
        for (int iter = 0; iter < 1500; iter++) {
                int numa[64];
                size_t n_numa;
                ncm_bitmask dev[2] = {0, 0}, dev2[2] = {0, 0};
                rng twin = r;
                ncm_devmgr *old = random_manager(&twin, numa, &n_numa, (ncm_kubelet_version){1, 36},
                                                 dev2);
                ncm_devmgr *m = random_manager(&r, numa, &n_numa, NCM_KUBELET_VERSION_DEFAULT, dev);
                ncm_devmgr_resource req[2];
                ncm_devmgr_container c = {"app", NCM_DEVMGR_APP_CONTAINER, req, 2};
                ncm_devmgr_hints a = NCM_DEVMGR_HINTS_INIT, b = NCM_DEVMGR_HINTS_INIT;
                ncm_error err = NCM_ERROR_INIT;

                assert_int_equal(dev[0], dev2[0]);
                for (int k = 0; k < 2; k++) {
                        int64_t n = (int64_t)below(&r, 5);
                        req[k] = (ncm_devmgr_resource){resources[k], n, n};
                }
                assert_int_equal(ncm_devmgr_container_hints(old, "p", &c, &a, &err), 0);
                assert_int_equal(ncm_devmgr_container_hints(m, "p", &c, &b, &err), 0);
                assert_int_equal(a.n, b.n);
                for (size_t i = 0; i < a.n; i++) {
                        int res = strcmp(a.v[i].resource, resources[0]) == 0 ? 0 : 1;
                        filtered_equal(&a.v[i].hints, dev[res], &b.v[i].hints, &dropped);
                        compared++;
                }
                ncm_devmgr_hints_done(&a);
                ncm_devmgr_hints_done(&b);
                ncm_devmgr_free(old);
                ncm_devmgr_free(m);
        }
        printf("# %zu lists compared across generations, %zu hints gone in 1.37\n", compared,
               dropped);
        assert_true(dropped > 100);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_device_hints_desc_random),
                        cmocka_unit_test(test_device_hints_desc_generations),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
