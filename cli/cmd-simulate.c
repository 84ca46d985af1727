/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nodecm simulate SCENARIO: replay a scenario on a simulated node (DESIGN.md "Simulation",
 * docs/simulate.md). Refused admissions are results; the exit status is 0 when the scenario ran
 * (1 with --fail-on-reject when an admission was refused).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <nodecm/fs.h>
#include <nodecm/map.h>
#include <nodecm/node.h>
#include <nodecm/sim.h>
#include "cli.h"
#include "cpu-args.h"
#include "kubelet-flags.h"

static void usage(FILE *f)
{
        fputs("Usage: nodecm simulate [OPTIONS] SCENARIO\n\n"
              "Replay SCENARIO (JSON or YAML, '-' for standard input) on a simulated node: the\n"
              "kubelet's CPU, device and topology managers admit pods, remove containers and\n"
              "pods, and restart from their checkpoint files, exactly as the kubelet would.\n\n"
              "  {\"node\": {\"topology\": {\"synthetic\": \"package:2 core:4 pu:2\"},\n"
              "            \"kubelet\": {\"cpuManagerPolicy\": \"static\", \"reservedSystemCPUs\": "
              "\"0\",\n"
              "                        \"topologyManagerPolicy\": \"single-numa-node\"}},\n"
              "   \"steps\": [{\"admit\": <a Pod object>},\n"
              "             {\"remove\": {\"pod\": \"<uid>\", \"container\": \"<name>\"}},\n"
              "             {\"removePod\": \"<uid>\"}, {\"restart\": {}}]}\n\n"
              "node.topology takes synthetic, fsroot, xml, file, or inline cpus/numa; "
              "node.kubelet\n"
              "takes KubeletConfiguration fields; node.state a starting cpu_manager_state (inline\n"
              "or {\"file\": PATH}); node.devices the devices of the node's device plugins\n"
              "({\"example.com/gpu\": [{\"id\": \"gpu0\", \"numa\": [0]}]}). Paths are relative "
              "to\n"
              "the scenario's directory.\n\n"
              "Output: one line per step (the containers' CPUs and NUMA nodes, or the rejection\n"
              "reason), then the CPU map per socket and NUMA node.\n\n"
              "  --json             one JSON line per step, then a final \"state\" line\n"
              "  --explain          for each admission: every provider's hints, the merged hint\n"
              "                     and why it won, and how the CPUs were chosen\n"
              "  --state-dir DIR    write the kubelet's checkpoint files (cpu_manager_state,\n"
              "                     kubelet_internal_checkpoint with devices) to\n"
              "                     DIR on every change, as the kubelet does; a restart reads\n"
              "                     them back\n"
              "  --html FILE        write the node map of the end state to FILE: one\n"
              "                     self-contained page (docs/map.md) with each pod's\n"
              "                     explanation and the steps\n"
              "  --html-steps DIR   write one page per step to DIR (step-0000.html, ...,\n"
              "                     linked to each other) and the end to DIR/index.html\n"
              "  --fail-on-reject   exit 1 when an admission was refused\n"
              "  --reference-merge  merge hints by walking every combination, as the kubelet\n"
              "                     does (same results, slow with many NUMA "
              "nodes)\n" CLI_KUBELET_VERSION_HELP
              "                     (over node.kubelet.kubeletVersion)\n"
              "  --config-decoding strict|lenient\n"
              "                     strict (default): a field of node.kubelet the kubelet\n"
              "                     does not know refuses the scenario; lenient: it is a\n"
              "                     warning and ignored, as the kubelet's lenient decoding\n"
              "                     does with its file\n"
              "  -h, --help         show this help\n\n"
              "Exit status: 0 the scenario ran (refused admissions are results), 1 a starting\n"
              "state or a restart the kubelet would refuse (or a refusal with --fail-on-reject),\n"
              "2 bad usage or a bad scenario (one line naming the field).\n",
              f);
}

/* --html, --html-steps: the pages, made as the steps run. */
typedef struct html_run {
        ncm_map_history *h;
        const char *file; /* --html */
        const char *dir;  /* --html-steps */
        const char *title;
        size_t total; /* the steps the scenario runs */
} html_run;

static int write_page(const char *path, const ncm_buf *page, ncm_error *err)
{
        if (ncm_buf_failed(page))
                return ncm_error_set(err, ENOMEM, "out of memory");
        return ncm_fs_write_atomic(AT_FDCWD, path, page->data, page->len, 0644, err);
}

static int page(html_run *h, const ncm_node *n, long step, bool links, const char *path,
                ncm_error *err)
{
        char caption[64];
        ncm_map_scene_options so = {.title = h->title, .history = h->h, .step = step};
        ncm_map_html_options ho = {.step_links = links, .n_steps_total = h->total};
        ncm_buf out = NCM_BUF_INIT;
        int r;

        if (step >= 0)
                snprintf(caption, sizeof(caption), "after step %ld of %zu", step, h->total);
        else
                snprintf(caption, sizeof(caption), "after the last of %zu steps", h->total);
        so.caption = caption;
        r = ncm_map_node_html(n, &so, &ho, &out, err);
        if (r >= 0 && (r = write_page(path, &out, err)) < 0)
                ncm_error_prefix(err, "%s", links ? "--html-steps" : "--html");
        ncm_buf_done(&out);
        return r;
}

static int on_step(const ncm_simulate_step *st, const ncm_node *n, void *data, ncm_error *err)
{
        html_run *h = data;
        ncm_autofree char *path = NULL;
        bool end = strcmp(st->op, "end") == 0;
        int r = 0;

        if (st->admission)
                r = ncm_map_history_admission(h->h, st->pod, st->admission);
        if (r >= 0 && !end)
                r = ncm_map_history_step(h->h, st->index, st->text);
        if (r < 0)
                return ncm_error_set(err, -r, "out of memory");
        if (h->dir) {
                if (end)
                        r = asprintf(&path, "%s/%s", h->dir, NCM_MAP_INDEX_PAGE);
                else
                        r = asprintf(&path, "%s/" NCM_MAP_STEP_PAGE_FMT, h->dir, st->index);
                if (r < 0)
                        return ncm_error_set(err, ENOMEM, "out of memory");
                r = page(h, n, end ? -1 : (long)st->index, true, path, err);
        }
        if (r >= 0 && end && h->file)
                r = page(h, n, -1, false, h->file, err);
        return r;
}

int cmd_simulate(int argc, char **argv)
{
        enum {
                OPT_STATE_DIR = 0x100,
                OPT_FAIL_ON_REJECT,
                OPT_REFERENCE,
                OPT_KUBELET_VERSION,
                OPT_HTML,
                OPT_HTML_STEPS,
                OPT_CONFIG_DECODING
        };
        static const struct option opts[] = {
                        {"json", no_argument, NULL, 'j'},
                        {"explain", no_argument, NULL, 'e'},
                        {"state-dir", required_argument, NULL, OPT_STATE_DIR},
                        {"fail-on-reject", no_argument, NULL, OPT_FAIL_ON_REJECT},
                        {"reference-merge", no_argument, NULL, OPT_REFERENCE},
                        {"kubelet-version", required_argument, NULL, OPT_KUBELET_VERSION},
                        {"html", required_argument, NULL, OPT_HTML},
                        {"html-steps", required_argument, NULL, OPT_HTML_STEPS},
                        {"config-decoding", required_argument, NULL, OPT_CONFIG_DECODING},
                        {"help", no_argument, NULL, 'h'},
                        {NULL, 0, NULL, 0},
        };
        ncm_simulate_options so = {0};
        ncm_autoptr(ncm_scenario) sc = NULL;
        ncm_autoclose int lockfd = -1;
        ncm_autoptr(ncm_map_history) history = NULL;
        ncm_simulate_summary sum = {0};
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf out = NCM_BUF_INIT;
        html_run html = {0};
        bool fail_on_reject = false;
        unsigned flags = 0;
        int c, r, rc;

        opterr = 0;
        optind = 1;
        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case 'j':
                        so.json = true;
                        break;
                case 'e':
                        so.explain = true;
                        break;
                case OPT_STATE_DIR:
                        so.state_dir = optarg;
                        break;
                case OPT_FAIL_ON_REJECT:
                        fail_on_reject = true;
                        break;
                case OPT_KUBELET_VERSION:
                        if (cli_kubelet_version("simulate", optarg, &so.kubelet_version) != 0)
                                return 2;
                        break;
                case OPT_REFERENCE:
                        so.reference_merge = true;
                        break;
                case OPT_HTML:
                        html.file = optarg;
                        break;
                case OPT_HTML_STEPS:
                        html.dir = optarg;
                        break;
                case OPT_CONFIG_DECODING: {
                        ncm_node_config_decoding dec;
                        if (ncm_node_config_decoding_parse(optarg, &dec) < 0)
                                return cli_usage_error("simulate",
                                                       "--config-decoding: expected strict or "
                                                       "lenient, got '%s'",
                                                       optarg);
                        flags = dec == NCM_NODE_CONFIG_LENIENT ? NCM_SCENARIO_LENIENT_CONFIG : 0;
                        break;
                }
                case 'h':
                        usage(stdout);
                        return 0;
                case ':':
                        return cli_usage_error("simulate", "option '%s' needs a value",
                                               argv[optind - 1]);
                default:
                        return cli_usage_error("simulate", "unknown option '%s'", argv[optind - 1]);
                }
        }
        if (optind >= argc)
                return cli_usage_error("simulate", "missing SCENARIO");
        if (optind + 1 < argc)
                return cli_usage_error("simulate", "unexpected argument '%s'", argv[optind + 1]);

        r = ncm_scenario_load_file(argv[optind], flags, &sc, &err);
        if (r < 0)
                return cli_fail(r, &err);
        if (html.file || html.dir) {
                history = ncm_map_history_new();
                if (!history)
                        return cli_fail(-ENOMEM, NULL);
                html.h = history;
                html.total = ncm_scenario_num_steps(sc);
                html.title = ncm_scenario_description(sc) ? ncm_scenario_description(sc)
                                                          : argv[optind];
                so.step_fn = on_step;
                so.step_data = &html;
        }
        if (html.dir && mkdir(html.dir, 0755) < 0 && errno != EEXIST)
                return cli_fail(ncm_error_errno(&err, errno, "--html-steps: '%s'", html.dir), &err);
        cli_config_warnings(ncm_scenario_config(sc), argv[optind]);
        /* the state directory is a node's: no two runs (nor a node command) write it at once */
        if (so.state_dir && (lockfd = ncm_node_dir_lock(so.state_dir, 0, &err)) < 0)
                return cli_fail(lockfd, &err);
        r = ncm_simulate(sc, &so, &out, &sum, &err);
        if (r < 0) {
                ncm_buf_done(&out);
                return cli_fail(r, &err);
        }
        rc = cli_emit_buf(&out);
        if (rc != 0)
                return rc;
        if (fail_on_reject && sum.rejected > 0) {
                fprintf(stderr, "nodecm: %zu of %zu admissions refused\n", sum.rejected,
                        sum.rejected + sum.admitted);
                return 1;
        }
        return 0;
}
