/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Properties of the in-place resize (KEP-5554) over every valid combination of the static
 * policy's options (packed and distributed allocators, full-pcpus-only, align-by-socket,
 * distribute-cpus-across-cores, strict-cpu-reservation, prefer-align-cpus-by-uncorecache), every
 * topology-manager policy and both scopes, with random admissions, resizes, removals and
 * restarts. After every step:
 *  - every exclusive container holds its promise (promised CPUs are never given back);
 *  - a resize that succeeded grew to a superset or shrank to a subset of what the container had,
 *    to exactly the CPUs it asked for, never below the promise; one that was refused changed
 *    nothing (the checkpoint text is the same);
 *  - the state is consistent: it passes the kubelet's validateState, and no CPU is held by two
 *    pods or both held and shared;
 *  - the checkpoint verifies and restores to the same state, promises included;
 *  - a restart in the middle keeps every entry and promise.
 * Half the configurations also run with device locality on (deviceLocalCPUs: prefer,
 * draTopologyHints: align): two PCI functions on NUMA nodes 1 and 2, named by their addresses
 * as CDI devices of some pods' first containers, so admissions and resizes prefer CPUs near
 * them and the DRA provider answers every re-admission; the properties are the same.
 * A third run with isolated CPUs (isolatedCPUs exclude or exclusive-only over 10-15, half of
 * NUMA node 1 and the first PCI function's CPUs; some pods annotated nodecm.io/isolated-cpus
 * require or prefer), where also:
 *  - the shared pool never holds an isolated CPU, and under exclude nothing does;
 *  - a resize stays in the container's pool: one that held only isolated CPUs holds only
 *    isolated CPUs after it, one that held none holds none.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/node-resize.h>
#include <nodecm/node.h>
#include "testutil.h"

/* 2 sockets, 2 NUMA nodes each, 4 cores x 2 threads per node: 32 CPUs */
#define MACHINE "package:2 numa:2 l3:1 core:4 pu:2"
#define STEPS 40

static const char *const option_names[] = {
                "full-pcpus-only",        "distribute-cpus-across-numa",
                "align-by-socket",        "distribute-cpus-across-cores",
                "strict-cpu-reservation", "prefer-align-cpus-by-uncorecache",
};

static unsigned rnd(unsigned *s)
{
        *s = *s * 1103515245u + 12345u;
        return (*s >> 16) & 0x7fff;
}

typedef struct run {
        ncm_topo *t;
        ncm_node_config *cfg;
        ncm_node *n;
        unsigned seed;
        int group;     /* whole cores only: requests in multiples of it */
        bool locality; /* deviceLocalCPUs and draTopologyHints on, CDI devices in pods */
        int iso;       /* isolatedCPUs: 0 ignore, else NCM_CPU_ISOLATION_* over ISOLATED */
        int pods;      /* pods admitted so far (uids p0, p1, ...) */
        char held[64][8];
        int ctrs[64]; /* containers of each held pod */
        int cpus[64][2];
        int n_held;
} run;

/* The isolated CPUs of the isolation runs. */
#define ISOLATED "10-15"

/* The PCI functions of the locality runs: part of NUMA node 1, part of NUMA node 2. */
static const char *const pci_addr[] = {"0000:3b:00.0", "0000:86:00.0"};
static const char *const pci_local[] = {"12-15", "16-17,20-21"};

static void add_pci(ncm_topo *t)
{
        ncm_pci_device d[2] = {{0}};
        ncm_error err = NCM_ERROR_INIT;
        ncm_pci *p = NULL;

        for (int i = 0; i < 2; i++) {
                d[i] = (ncm_pci_device){.address = (char *)pci_addr[i],
                                        .class_code = 0x020000,
                                        .vendor = 0x15b3,
                                        .device = 0x1018,
                                        .numa = i + 1,
                                        .local_cpus = tu_cpuset(pci_local[i])};
        }
        if (ncm_pci_new(d, 2, &p, &err) < 0)
                fail_msg("pci: %s", err.msg);
        ncm_topo_set_pci(t, p);
        for (int i = 0; i < 2; i++)
                ncm_cpuset_free(d[i].local_cpus);
}

/*
 * Pod UID's first container names a CDI device (which, from the uid: the same for its
 * admission and every resize) when LOCALITY is on; with ISO, some pods ask for isolated CPUs
 * (also from the uid).
 */
static ncm_pod *make_pod(const char *uid, int nc, const int *cpus, bool locality, bool iso)
{
        static const char *const asks[] = {NULL, "require", "prefer", NULL};
        ncm_buf b = NCM_BUF_INIT;
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *p = NULL;
        unsigned num = (unsigned)strtoul(uid + 1, NULL, 10), which = num % 3;
        const char *ask = iso ? asks[num % 4] : NULL;
        bool cdi = locality && which > 0;

        ncm_buf_printf(&b, "{\"metadata\": {\"uid\": \"%s\", \"name\": \"%s\"", uid, uid);
        if (cdi || ask)
                ncm_buf_puts(&b, ", \"annotations\": {");
        if (cdi)
                ncm_buf_printf(&b,
                               "\"nodecm.io/cdi-devices\": "
                               "\"{\\\"c0\\\": [\\\"vendor.com/nic=%s\\\"]}\"",
                               pci_addr[which - 1]);
        if (ask)
                ncm_buf_printf(&b, "%s\"nodecm.io/isolated-cpus\": \"%s\"", cdi ? ", " : "", ask);
        if (cdi || ask)
                ncm_buf_putc(&b, '}');
        ncm_buf_puts(&b, "}, \"spec\": {\"containers\": [");
        for (int i = 0; i < nc; i++) {
                char q[16];
                if (cpus[i] > 0)
                        snprintf(q, sizeof(q), "%d", cpus[i]);
                else
                        snprintf(q, sizeof(q), "%dm", -cpus[i]);
                ncm_buf_printf(&b,
                               "%s{\"name\": \"c%d\", \"resources\": {\"limits\": {\"cpu\": "
                               "\"%s\", \"memory\": \"1Gi\"}}}",
                               i ? ", " : "", i, q);
        }
        ncm_buf_puts(&b, "]}}");
        if (ncm_pod_parse(b.data, b.len, NULL, &p, &err) < 0)
                fail_msg("%s: %s", b.data, err.msg);
        ncm_buf_done(&b);
        return p;
}

/* A request: whole CPUs (a multiple of the group) or, now and then, millicores (negative). */
static int some_cpus(run *r)
{
        if (rnd(&r->seed) % 5 == 0)
                return -(int)(100 + rnd(&r->seed) % 900);
        return r->group * (int)(1 + rnd(&r->seed) % (r->group > 1 ? 3 : 5));
}

/*
 * With strict-cpu-reservation, exclusive CPUs may take every unreserved CPU and leave the shared
 * pool empty: the kubelet allows it and then refuses to start on its own checkpoint (kubernetes
 * issue #141196). nodecm does the same, so such a node is only resized, removed from and
 * restarted (which must fail), not admitted to: an admission that fit refuses asks the managers
 * on a copy, and the copy cannot start either.
 */
static bool full(run *r)
{
        const ncm_cpu_state *s = ncm_node_cpu_state(r->n);
        return ncm_cpu_policy_options(ncm_node_cpu_policy(r->n))->strict_cpu_reservation &&
               ncm_cpuset_is_empty(ncm_cpu_state_default(s)) && ncm_cpu_state_num_pods(s);
}

/* The checkpoint text of the node's state. */
static char *checkpoint(run *r)
{
        ncm_buf b = NCM_BUF_INIT;
        ncm_node_format_cpu_checkpoint(r->n, &b);
        return ncm_buf_steal(&b);
}

/* Every invariant of the state, read through its checkpoint. */
static void check_state(run *r, const char *what)
{
        const ncm_cpu_state *s = ncm_node_cpu_state(r->n);
        ncm_autoptr(ncm_cpuset) seen = ncm_cpuset_new();
        ncm_autoptr(ncm_cpuset) all = ncm_cpuset_new();
        ncm_cpu_state *copy = ncm_cpu_state_dup(s), *back = NULL;
        ncm_cpu_checkpoint *c = NULL;
        char *text = checkpoint(r);
        ncm_error err = NCM_ERROR_INIT;
        const ncm_cpu_policy *p = ncm_node_cpu_policy(r->n);

        ncm_topo_all_cpus(r->t, all);
        for (size_t i = 0; i < ncm_cpu_state_num_pods(s); i++) {
                ncm_autoptr(ncm_cpuset) pod = ncm_cpuset_new();
                for (size_t k = 0; k < ncm_cpu_state_pod_num_containers(s, i); k++) {
                        const ncm_cpuset *cs = ncm_cpu_state_container_cpus(s, i, k);
                        const ncm_cpuset *pr = ncm_cpu_state_container_promised(s, i, k);
                        if (!pr || !ncm_cpuset_is_subset(pr, cs))
                                fail_msg("%s: %s/%s does not hold its promise: %s", what,
                                         ncm_cpu_state_pod_uid(s, i),
                                         ncm_cpu_state_container_name(s, i, k), text);
                        ncm_cpuset_or(pod, pod, cs);
                }
                if (ncm_cpuset_intersects(pod, seen))
                        fail_msg("%s: a CPU held by two pods: %s", what, text);
                ncm_cpuset_or(seen, seen, pod);
        }
        if (ncm_cpuset_intersects(seen, ncm_cpu_state_default(s)))
                fail_msg("%s: a held CPU is in the shared pool: %s", what, text);
        if (r->iso) {
                ncm_autoptr(ncm_cpuset) iso = tu_cpuset(ISOLATED);
                ncm_autoptr(ncm_cpuset) pool = ncm_cpuset_new();
                ncm_node_shared_pool(r->n, pool);
                if (ncm_cpuset_intersects(pool, iso))
                        fail_msg("%s: the shared pool holds an isolated CPU: %s", what, text);
                if (r->iso == NCM_CPU_ISOLATION_EXCLUDE && ncm_cpuset_intersects(seen, iso))
                        fail_msg("%s: exclude handed out an isolated CPU: %s", what, text);
        }
        /* validateState calls a full node's empty pool invalid: the union is checked instead */
        if (full(r)) {
                ncm_cpuset_andnot(all, all, ncm_cpu_policy_reserved(p));
                if (!ncm_cpuset_equal(seen, all))
                        fail_msg("%s: held CPUs are not all unreserved CPUs: %s", what, text);
        } else if (ncm_cpu_state_validate(copy, all, ncm_cpu_policy_reserved(p),
                                          ncm_cpu_policy_options(p)->strict_cpu_reservation,
                                          &err) < 0) {
                fail_msg("%s: %s: %s", what, err.msg, text);
        }
        if (ncm_cpu_checkpoint_parse(text, strlen(text), "state", &c, &err) < 0 ||
            ncm_cpu_checkpoint_verify(c, &err) < 0 ||
            ncm_cpu_checkpoint_restore(c, "static", NULL, 0, &back, &err) < 0)
                fail_msg("%s: the checkpoint: %s: %s", what, err.msg, text);
        if (!ncm_cpu_state_equal(back, s))
                fail_msg("%s: the checkpoint restores another state: %s", what, text);
        ncm_cpu_state_free(back);
        ncm_cpu_checkpoint_free(c);
        ncm_cpu_state_free(copy);
        free(text);
}

static void step_admit(run *r)
{
        char uid[8];
        int nc = 1 + (int)(rnd(&r->seed) % 2), cpus[2];
        ncm_node_admission *a = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_pod *p;

        if (r->n_held == 64 || full(r))
                return;
        snprintf(uid, sizeof(uid), "p%d", r->pods++);
        for (int i = 0; i < nc; i++)
                cpus[i] = some_cpus(r);
        p = make_pod(uid, nc, cpus, r->locality, r->iso != 0);
        if (ncm_node_admit(r->n, p, 0, &a, &err) < 0)
                fail_msg("admit: %s", err.msg);
        if (a->admitted) {
                snprintf(r->held[r->n_held], sizeof(r->held[0]), "%s", uid);
                r->ctrs[r->n_held] = nc;
                memcpy(r->cpus[r->n_held], cpus, sizeof(cpus));
                r->n_held++;
        }
        ncm_node_admission_free(a);
        ncm_pod_free(p);
}

/* Whether a container that held BEFORE and now holds NOW stayed in its isolation pool. */
static bool pool_kept(const ncm_cpuset *before, const ncm_cpuset *now)
{
        ncm_autoptr(ncm_cpuset) iso = tu_cpuset(ISOLATED);

        if (ncm_cpuset_is_subset(before, iso))
                return ncm_cpuset_is_subset(now, iso);
        if (!ncm_cpuset_intersects(before, iso))
                return !ncm_cpuset_intersects(now, iso);
        return true; /* both pools already (exclusive-only's spill) */
}

static void step_resize(run *r)
{
        int k, nc, cpus[2], ci;
        const ncm_cpu_state *s = ncm_node_cpu_state(r->n);
        ncm_cpuset *before[2] = {NULL, NULL};
        ncm_node_admission *a = NULL;
        ncm_error err = NCM_ERROR_INIT;
        char *text_before, *text_after, name[16];
        ncm_pod *p;

        if (!r->n_held)
                return;
        k = (int)(rnd(&r->seed) % (unsigned)r->n_held);
        nc = r->ctrs[k];
        memcpy(cpus, r->cpus[k], sizeof(cpus));
        ci = (int)(rnd(&r->seed) % (unsigned)nc);
        if (cpus[ci] > 0) {
                /* up or down by whole cores; down mostly not below the promise, now and then
                 * below it */
                int d = r->group * (int)(1 + rnd(&r->seed) % 3);
                const ncm_cpuset *pr;
                snprintf(name, sizeof(name), "c%d", ci);
                pr = ncm_cpu_state_promised(s, r->held[k], name);
                if (rnd(&r->seed) % 2) {
                        cpus[ci] += d;
                } else {
                        if (pr && rnd(&r->seed) % 4 && cpus[ci] - d < ncm_cpuset_weight(pr))
                                d = cpus[ci] - ncm_cpuset_weight(pr);
                        cpus[ci] = cpus[ci] - d > 0 ? cpus[ci] - d : r->group;
                }
        } else {
                cpus[ci] = -(int)(100 + rnd(&r->seed) % 900);
        }
        for (int i = 0; i < nc; i++) {
                const ncm_cpuset *h;
                snprintf(name, sizeof(name), "c%d", i);
                h = ncm_cpu_state_get(s, r->held[k], name);
                before[i] = h ? ncm_cpuset_dup(h) : NULL;
        }
        text_before = checkpoint(r);
        p = make_pod(r->held[k], nc, cpus, r->locality, r->iso != 0);
        if (ncm_node_resize(r->n, p, 0, &a, &err) < 0)
                fail_msg("resize: %s", err.msg);
        text_after = checkpoint(r);
        if (!a->admitted) {
                if (strcmp(text_before, text_after) != 0)
                        fail_msg("a refused resize (%s: %s) changed the state:\n%s\n%s", a->reason,
                                 a->message, text_before, text_after);
        } else {
                memcpy(r->cpus[k], cpus, sizeof(cpus));
                for (int i = 0; i < nc; i++) {
                        const ncm_cpuset *now;
                        snprintf(name, sizeof(name), "c%d", i);
                        now = ncm_cpu_state_get(s, r->held[k], name);
                        if (!before[i] || !now)
                                continue;
                        if (ncm_cpuset_weight(now) != cpus[i])
                                fail_msg("resized to %d CPUs, holds %d", cpus[i],
                                         ncm_cpuset_weight(now));
                        if (ncm_cpuset_weight(now) >= ncm_cpuset_weight(before[i])
                                            ? !ncm_cpuset_is_subset(before[i], now)
                                            : !ncm_cpuset_is_subset(now, before[i]))
                                fail_msg("a resize neither grew nor shrank the set: %s -> %s",
                                         text_before, text_after);
                        if (r->iso && !pool_kept(before[i], now))
                                fail_msg("a resize left the container's isolation pool: %s -> "
                                         "%s",
                                         text_before, text_after);
                }
        }
        for (int i = 0; i < nc; i++)
                ncm_cpuset_free(before[i]);
        free(text_before);
        free(text_after);
        ncm_node_admission_free(a);
        ncm_pod_free(p);
}

static void step_remove(run *r)
{
        ncm_error err = NCM_ERROR_INIT;
        int k;

        if (!r->n_held)
                return;
        k = (int)(rnd(&r->seed) % (unsigned)r->n_held);
        if (ncm_node_remove_pod(r->n, r->held[k], NULL, &err) < 0)
                fail_msg("remove: %s", err.msg);
        r->n_held--;
        memmove(r->held[k], r->held[k + 1], (size_t)(r->n_held - k) * sizeof(r->held[0]));
        memmove(&r->ctrs[k], &r->ctrs[k + 1], (size_t)(r->n_held - k) * sizeof(r->ctrs[0]));
        memmove(r->cpus[k], r->cpus[k + 1], (size_t)(r->n_held - k) * sizeof(r->cpus[0]));
}

static void step_restart(run *r)
{
        ncm_error err = NCM_ERROR_INIT;
        char *before = checkpoint(r), *after;

        bool is_full = full(r);

        /* a full node restarts as the kubelet's would not: it fails with its text and leaves the
         * node as it was */
        if (ncm_node_restart(r->n, NULL, &err) < 0) {
                if (!is_full)
                        fail_msg("restart: %s: %s", err.msg, before);
                assert_non_null(strstr(err.msg, "default cpuset cannot be empty"));
        } else if (is_full) {
                fail_msg("a full node with strict-cpu-reservation restarted: %s", before);
        }
        after = checkpoint(r);
        assert_string_equal(before, after);
        free(before);
        free(after);
}

/* One configuration: its options (a bit per option_names), policy and scope. */
/* The CDI devices of the pods the node holds, each located on the PCI table. */
static int located_devices(run *r)
{
        ncm_device_location *v = NULL;
        ncm_error err = NCM_ERROR_INIT;
        size_t n = 0;
        int found = 0;

        if (ncm_node_device_locations(r->n, &v, &n, &err) < 0)
                fail_msg("locations: %s", err.msg);
        for (size_t i = 0; i < n; i++) {
                if (strncmp(v[i].device, "vendor.com/nic=", 15) != 0)
                        continue;
                if (!v[i].located)
                        fail_msg("%s: not located: %s", v[i].device, v[i].how);
                found++;
        }
        ncm_device_locations_free(v, n);
        return found;
}

static int run_one(unsigned opts, const char *policy, const char *scope, unsigned seed,
                   bool locality, int iso, int *located)
{
        ncm_buf k = NCM_BUF_INIT;
        ncm_error err = NCM_ERROR_INIT;
        run r = {.seed = seed, .group = 1, .locality = locality, .iso = iso};
        int rc;

        ncm_buf_printf(&k,
                       "{\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": \"0-1\", "
                       "\"topologyManagerPolicy\": \"%s\", \"topologyManagerScope\": \"%s\", "
                       "%s%s"
                       "\"featureGates\": {\"InPlacePodVerticalScalingExclusiveCPUs\": true, "
                       "\"CPUManagerPolicyAlphaOptions\": true}, \"cpuManagerPolicyOptions\": {",
                       policy, scope,
                       locality ? "\"deviceLocalCPUs\": \"prefer\", \"draTopologyHints\": "
                                  "\"align\", \"cdiSpecDirs\": [], "
                                : "",
                       iso == NCM_CPU_ISOLATION_EXCLUDE ? "\"isolatedCPUs\": \"exclude\", "
                       : iso                            ? "\"isolatedCPUs\": \"exclusive-only\", "
                                                        : "");
        for (unsigned i = 0, first = 1; i < NCM_ELEMENTSOF(option_names); i++)
                if (opts & (1u << i)) {
                        ncm_buf_printf(&k, "%s\"%s\": \"true\"", first ? "" : ", ",
                                       option_names[i]);
                        first = 0;
                }
        ncm_buf_puts(&k, "}}");
        if (ncm_topo_from_synthetic(MACHINE, &r.t, &err) < 0)
                fail_msg("%s", err.msg);
        if (locality)
                add_pci(r.t);
        if (iso) {
                ncm_autoptr(ncm_cpuset) cpus = tu_cpuset(ISOLATED);
                if (ncm_topo_set_isolation(r.t, NCM_ISO_GIVEN_ISOLATED, cpus, &err) < 0)
                        fail_msg("%s", err.msg);
        }
        rc = ncm_node_config_parse(k.data, k.len, "kubelet", "node.kubelet", &r.cfg, &err);
        if (rc >= 0)
                rc = ncm_node_new(r.t, r.cfg, NULL, &r.n, &err);
        if (rc < 0) {
                /* not a valid combination: the kubelet would refuse it too */
                ncm_node_config_free(r.cfg);
                ncm_topo_free(r.t);
                ncm_buf_done(&k);
                return 0;
        }
        if (opts & 1u)
                r.group = 2;
        for (int i = 0; i < STEPS; i++) {
                unsigned op = rnd(&r.seed) % 10;
                char what[512];
                if (op < 4)
                        step_admit(&r);
                else if (op < 8)
                        step_resize(&r);
                else if (op < 9)
                        step_remove(&r);
                else
                        step_restart(&r);
                snprintf(what, sizeof(what), "%s, step %d (op %u)", k.data, i, op);
                check_state(&r, what);
        }
        if (locality)
                *located += located_devices(&r);
        ncm_node_free(r.n);
        ncm_node_config_free(r.cfg);
        ncm_topo_free(r.t);
        ncm_buf_done(&k);
        return 1;
}

static void test_resize_properties_every_combination(void **state)
{
        static const char *const policies[] = {"none", "best-effort", "restricted",
                                               "single-numa-node"};
        static const char *const scopes[] = {"container", "pod"};
        int valid = 0, located = 0;
        (void)state;

        for (unsigned opts = 0; opts < 64; opts++)
                for (size_t p = 0; p < NCM_ELEMENTSOF(policies); p++)
                        for (size_t s = 0; s < NCM_ELEMENTSOF(scopes); s++) {
                                /* a third with isolated CPUs, both modes, with and without
                                 * locality */
                                int iso = (opts + p) % 3 != 0   ? 0
                                          : (opts / 3) % 2 == 0 ? NCM_CPU_ISOLATION_EXCLUSIVE_ONLY
                                                                : NCM_CPU_ISOLATION_EXCLUDE;
                                valid += run_one(opts, policies[p], scopes[s],
                                                 opts * 131u + (unsigned)p * 17u + (unsigned)s,
                                                 (opts + p + s) % 2 == 1, iso, &located);
                        }
        /* of the 512, the kubelet refuses 316: distribute-cpus-across-cores with
         * full-pcpus-only, distribute-cpus-across-numa or prefer-align-cpus-by-uncorecache;
         * prefer-align-cpus-by-uncorecache with distribute-cpus-across-numa; align-by-socket
         * with single-numa-node. Every other one ran. */
        assert_int_equal(valid, 196);
        /* the locality runs ended holding pods with CDI devices, every one located */
        assert_true(located > 0);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                        cmocka_unit_test(test_resize_properties_every_combination),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
