/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The node map (issue 26) of the 64-NUMA example (examples/many-numa/map-64-numa.yaml: 1,024
 * CPUs, 24 devices, 98 pods at the end): how big its page is and how long it takes to make --
 * the scene alone, the page from it, the scene with every pod's admission replayed on a copy of
 * the node (what node status --html and nodecmd's /map do) -- and how long headless Chromium
 * takes to load it, against an empty page (the browser's own start), when chromium is there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nodecm/map.h>
#include <nodecm/sim.h>
#include "benchutil.h"

typedef struct ctx {
        const ncm_node *n;
        ncm_map_history *h;
        ncm_map_scene *scene; /* with the history's explanations */
        unsigned flags;
        size_t page_len, replay_len, live_len;
} ctx;

static void fail(const char *what, const ncm_error *err)
{
        fprintf(stderr, "bench-map: %s: %s\n", what, err ? err->msg : "out of memory");
        exit(1);
}

static void scene_only(void *arg)
{
        ctx *c = arg;
        ncm_map_scene_options o = {.step = -1, .flags = c->flags};
        ncm_map_scene *s = NULL;

        if (ncm_map_scene_from_node(c->n, &o, &s, NULL) < 0)
                fail("scene", NULL);
        ncm_map_scene_free(s);
}

static void render_only(void *arg)
{
        ctx *c = arg;
        ncm_buf b = NCM_BUF_INIT;

        if (ncm_map_render_html(c->scene, NULL, &b) < 0)
                fail("render", NULL);
        c->page_len = b.len;
        ncm_buf_done(&b);
}

static void whole_replayed(void *arg)
{
        ctx *c = arg;
        ncm_map_scene_options o = {.step = -1, .flags = NCM_MAP_REPLAY};
        ncm_buf b = NCM_BUF_INIT;

        if (ncm_map_node_html(c->n, &o, NULL, &b, NULL) < 0)
                fail("page", NULL);
        c->replay_len = b.len;
        ncm_buf_done(&b);
}

static void whole_live(void *arg)
{
        ctx *c = arg;
        ncm_map_scene_options o = {.step = -1};
        ncm_map_html_options ho = {.events_url = "/map/events", .explain_url = "/map/explain?pod="};
        ncm_buf b = NCM_BUF_INIT;

        if (ncm_map_node_html(c->n, &o, &ho, &b, NULL) < 0)
                fail("page", NULL);
        c->live_len = b.len;
        ncm_buf_done(&b);
}

static void explain_one(void *arg)
{
        ctx *c = arg;
        ncm_buf b = NCM_BUF_INIT;

        if (ncm_map_explain_pod(c->n, c->scene->pods[c->scene->n_pods / 2].uid, &b, NULL) < 0)
                fail("explain", NULL);
        ncm_buf_done(&b);
}

static void browser(ctx *c, char a[32], char b[32]);

/* The measurements, at the end of the scenario, while the node is there. */
static void measure(ctx *c)
{
        char t1[32], t2[32], t3[32], t4[32], t5[32], t6[32], b1[32], b2[32];
        double scene, render, replay, whole, live, one;

        c->flags = 0;
        scene = bench_median_ns(scene_only, c, 1000);
        render = bench_median_ns(render_only, c, 1000);
        c->flags = NCM_MAP_REPLAY;
        replay = bench_median_ns(scene_only, c, 100);
        whole = bench_median_ns(whole_replayed, c, 100);
        live = bench_median_ns(whole_live, c, 1000);
        one = bench_median_ns(explain_one, c, 100);
        browser(c, b1, b2);
        printf("## Node map (issue 26, bench-map)\n\n"
               "The page of examples/many-numa/map-64-numa.yaml at its end: 1,024 CPUs on 64 NUMA "
               "nodes,\n%zu pods, %zu devices. Target: at most 1 MB, quick to make and to "
               "render.\n\n",
               c->scene->n_pods, c->scene->n_devices);
        printf("| what | time (median) | page |\n|---|---:|---:|\n");
        printf("| the scene of the node (ncm_map_scene_from_node) | %s | |\n",
               bench_fmt_ns(scene, t1));
        printf("| its page (ncm_map_render_html; `simulate --html`, explanations from the "
               "admissions) | %s | %zu KB |\n",
               bench_fmt_ns(render, t2), (c->page_len + 512) / 1024);
        printf("| the scene with every pod's admission replayed on a copy of the node | %s | |\n",
               bench_fmt_ns(replay, t3));
        printf("| the whole page of `node status --html` (replayed, then drawn) | %s | %zu KB "
               "|\n",
               bench_fmt_ns(whole, t4), (c->replay_len + 512) / 1024);
        printf("| nodecmd's /map (explanations fetched when looked at) | %s | %zu KB |\n",
               bench_fmt_ns(live, t5), (c->live_len + 512) / 1024);
        printf("| one pod's explanation, /map/explain (ncm_map_explain_pod) | %s | |\n",
               bench_fmt_ns(one, t6));
        printf("| headless Chromium: start, load the page, dump its DOM (median of 5) | %s | |\n",
               b1);
        printf("| headless Chromium on an empty page: its own start (median of 5) | %s | |\n", b2);
}

static int on_step(const ncm_simulate_step *st, const ncm_node *n, void *data, ncm_error *err)
{
        ctx *c = data;
        ncm_map_scene_options o = {.history = c->h, .step = -1};

        if (st->admission && ncm_map_history_admission(c->h, st->pod, st->admission) < 0)
                fail("history", NULL);
        if (strcmp(st->op, "end") != 0) {
                if (ncm_map_history_step(c->h, st->index, st->text) < 0)
                        fail("history", NULL);
                return 0;
        }
        c->n = n;
        if (ncm_map_scene_from_node(n, &o, &c->scene, err) < 0)
                fail("scene", err);
        measure(c);
        return 0;
}

/* Wall time of one headless Chromium run on URL (dumping the DOM), or -1. */
static double chromium_ns(const char *url, const char *profile)
{
        uint64_t t0 = bench_now_ns();
        pid_t pid = fork();
        int status;

        if (pid == 0) {
                char dir[600];
                snprintf(dir, sizeof(dir), "--user-data-dir=%s", profile);
                if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr))
                        _exit(127);
                execlp("chromium", "chromium", "--headless", "--no-sandbox", "--disable-gpu",
                       "--disable-quic", "--no-first-run", "--disable-background-networking",
                       "--disable-component-update", "--disable-sync", dir, "--dump-dom", url,
                       (char *)NULL);
                _exit(127);
        }
        if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
                return -1;
        return (double)(bench_now_ns() - t0);
}

/* The median of 5 runs on URL; -1 when chromium cannot run. */
static double chromium_median(const char *url, const char *tmp)
{
        double v[5];
        char profile[512];

        for (int i = 0; i < 5; i++) {
                snprintf(profile, sizeof(profile), "%s/profile-%d-%d", tmp, i, (int)getpid());
                v[i] = chromium_ns(url, profile);
                if (v[i] < 0)
                        return -1;
        }
        qsort(v, 5, sizeof(*v), bench_cmp_double);
        return v[2];
}

static void browser(ctx *c, char a[32], char b[32])
{
        char tmp[] = "/tmp/bench-map.XXXXXX", page[600], empty[600], url[700], cmd[700];
        ncm_buf html = NCM_BUF_INIT;
        FILE *f;
        double t_page, t_empty;

        snprintf(a, 32, "(no chromium)");
        snprintf(b, 32, "(no chromium)");
        if (!mkdtemp(tmp))
                return;
        snprintf(page, sizeof(page), "%s/64.html", tmp);
        snprintf(empty, sizeof(empty), "%s/empty.html", tmp);
        if (ncm_map_render_html(c->scene, NULL, &html) == 0 && (f = fopen(page, "w"))) {
                fwrite(html.data, 1, html.len, f);
                fclose(f);
        }
        if ((f = fopen(empty, "w"))) {
                fputs("<!DOCTYPE html><html><body></body></html>\n", f);
                fclose(f);
        }
        ncm_buf_done(&html);
        snprintf(url, sizeof(url), "file://%s", page);
        t_page = chromium_median(url, tmp);
        snprintf(url, sizeof(url), "file://%s", empty);
        t_empty = chromium_median(url, tmp);
        if (t_page >= 0 && t_empty >= 0) {
                bench_fmt_ns(t_page, a);
                bench_fmt_ns(t_empty, b);
        }
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
        if (system(cmd) != 0)
                fprintf(stderr, "bench-map: could not remove %s\n", tmp);
}

int main(void)
{
        ncm_error err = NCM_ERROR_INIT;
        ncm_scenario *sc = NULL;
        ncm_simulate_options so = {0};
        ncm_buf out = NCM_BUF_INIT;
        ctx c = {0};

        c.h = ncm_map_history_new();
        if (!c.h)
                fail("history", NULL);
        if (ncm_scenario_load_file(NCM_SOURCE_ROOT "/examples/many-numa/map-64-numa.yaml", 0, &sc,
                                   &err) < 0)
                fail("examples/many-numa/map-64-numa.yaml", &err);
        so.step_fn = on_step;
        so.step_data = &c;
        if (ncm_simulate(sc, &so, &out, NULL, &err) < 0)
                fail("simulate", &err);
        ncm_buf_done(&out);
        ncm_map_scene_free(c.scene);
        ncm_map_history_free(c.h);
        ncm_scenario_free(sc);
        return 0;
}
