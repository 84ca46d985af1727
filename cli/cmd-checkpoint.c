/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nodecm checkpoint verify|show|rewrite FILE: read, check and repair the kubelet's checkpoint
 * files. The inspection is the library's (nodecm/checkpoint.h); this file parses the options,
 * reads the file, loads the machine when one is asked for, takes the node directory's lock for
 * a rewrite and prints.
 *
 * Input files are only ever read, except by `rewrite`, which replaces its target atomically.
 * Output is built in memory and emitted once, so a failure leaves stdout empty.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nodecm/checkpoint.h>
#include <nodecm/cpustate.h>
#include <nodecm/fs.h>
#include <nodecm/memorymanager.h>
#include <nodecm/node.h>
#include "cli.h"
#include "source.h"

/* Largest checkpoint file read (the cpu_manager_state limit; device checkpoints are smaller). */
#define CHECKPOINT_MAX_SIZE NCM_CPU_CHECKPOINT_MAX_SIZE

/* ---------------------------------------------------------------------------------------- */
/* The command                                                                               */
/* ---------------------------------------------------------------------------------------- */

enum {
        OPT_JSON = 0x2000,
        OPT_POLICY,
        OPT_RESERVED,
        OPT_STRICT,
        OPT_CONTAINER,
        OPT_OUTPUT,
        OPT_FIX_CHECKSUM,
        OPT_FIT,
        OPT_DROP,
        OPT_RESERVED_MEMORY,
        OPT_KUBELET_VERSION,
};

typedef enum sub { SUB_VERIFY, SUB_SHOW, SUB_REWRITE } sub;

static const char *const sub_names[] = {"verify", "show", "rewrite"};

static void usage(FILE *f)
{
        fputs("Usage: nodecm checkpoint verify FILE [--policy NAME] [SOURCE] [--reserved LIST]\n"
              "                                [--strict] [--container ID=POD/NAME]...\n"
              "       nodecm checkpoint show FILE [--json] [--reserved LIST]\n"
              "       nodecm checkpoint rewrite FILE [--output FILE] [--policy NAME]\n"
              "                                [--container ID=POD/NAME]... [--fix-checksum]\n"
              "                                [--drop POD]... [--fit [SOURCE] [--reserved LIST]\n"
              "                                [--strict]]\n\n"
              "Read the kubelet's checkpoint files with their checksums. The kind of file is\n"
              "recognised from its content: cpu_manager_state (V1, V2, V3, and V4, what\n"
              "kubelet 1.37 writes), memory_manager_state (the layouts of 1.35 and before,\n"
              "1.36 and 1.37) or kubelet_internal_checkpoint (the device manager's). Each is\n"
              "read as one kubelet release reads it (--kubelet-version; default: the newest).\n\n"
              "  verify   check the file as the kubelet does when it starts: decoding, checksum,\n"
              "           cpusets, policy; with a machine, also the static policy's start-up\n"
              "           validation, saying exactly why the kubelet would refuse to start\n"
              "  show     print the contents: per pod and container, the shared pool, the\n"
              "           reserved CPUs (--reserved); --json for a stable JSON rendering\n"
              "  rewrite  write the file back exactly as the kubelet writes it (canonical\n"
              "           cpusets, sorted keys, fresh checksums; its own layout, or that of\n"
              "           --kubelet-version), optionally repaired to fit a machine (--fit) or\n"
              "           without drained pods (--drop); the only subcommand that writes\n\n"
              "Run 'nodecm checkpoint SUBCOMMAND --help' for the options of each.\n"
              "Exit status: 0 valid/done, 1 the file fails verification, 2 bad usage or a\n"
              "file that cannot be read, is not JSON, or is of an unknown kind,\n" CLI_EXIT_ENV,
              f);
}

static void usage_sub(sub which, FILE *f)
{
        switch (which) {
        case SUB_VERIFY:
                fputs("Usage: nodecm checkpoint verify FILE [OPTIONS]\n\n"
                      "Check FILE as the kubelet does when it starts and print one line saying\n"
                      "what it is when it is valid. Without a machine: decoding, checksum and\n"
                      "cpusets. With a machine (a SOURCE option, --reserved or --strict; none of\n"
                      "the source options means this machine) the static policy's start-up\n"
                      "validation runs too.\n\n"
                      "  --policy NAME          the configured cpuManagerPolicy; refuse a file of\n"
                      "                         another policy, as the kubelet does\n"
                      "  --reserved LIST        the reserved CPUs (reservedSystemCPUs)\n"
                      "  --strict               strict-cpu-reservation is on\n"
                      "  --container ID=POD/NAME  a running container, for migrating a V1 file\n"
                      "                         (repeat for each)\n"
                      "  --reserved-memory SPEC memory_manager_state: the kubelet's "
                      "reservedMemory\n"
                      "                         (0:memory=1Gi;1:memory=1Gi), for validateState\n"
                      "  --kubelet-version X.Y  read as that kubelet release does (default: the\n"
                      "                         newest)\n"
                      "  -h, --help             show this help\n\n" CLI_SOURCE_HELP
                      "\nExit status: 0 valid, 1 invalid (the reason on stderr), 2 bad usage or a\n"
                      "file that cannot be read, is not JSON, or is of an unknown "
                      "kind,\n" CLI_EXIT_ENV,
                      f);
                break;
        case SUB_SHOW:
                fputs("Usage: nodecm checkpoint show FILE [--json] [--reserved LIST]\n"
                      "                              [--kubelet-version X.Y]\n\n"
                      "Print what FILE holds: its kind, checksum status, policy, the shared pool,\n"
                      "the exclusive CPUs per pod and container. A file that fails verification\n"
                      "is shown all the same, with the reason.\n\n"
                      "  --json                 print a stable JSON rendering instead\n"
                      "  --reserved LIST        mark these reserved CPUs: where they are\n"
                      "  --kubelet-version X.Y  say how that kubelet release reads it, and show\n"
                      "                         what it reads (default: the newest)\n"
                      "  -h, --help             show this help\n\n"
                      "Exit status: 0 shown, 1 a file of a known kind that cannot be decoded,\n"
                      "2 bad usage or a file that cannot be read, is not JSON or is "
                      "unknown,\n" CLI_EXIT_ENV,
                      f);
                break;
        case SUB_REWRITE:
                fputs("Usage: nodecm checkpoint rewrite FILE [OPTIONS]\n\n"
                      "Write FILE back (or to --output) exactly as the kubelet writes it:\n"
                      "canonical cpusets, keys sorted, fresh checksums, in the file's own layout\n"
                      "(cpu_manager_state V4 stays V4, V1 and V2 become V2) or that of\n"
                      "--kubelet-version. A V1 file is migrated (give its containers with\n"
                      "--container). A file already in that form is left untouched. The file is\n"
                      "replaced atomically.\n\n"
                      "  --output FILE          write there instead of replacing FILE\n"
                      "  --policy NAME          refuse a file of another policy\n"
                      "  --container ID=POD/NAME  a running container, for migrating a V1 file\n"
                      "  --fix-checksum         accept a file whose checksum does not match "
                      "(after\n"
                      "                         editing it by hand) and write a correct one\n"
                      "  --drop POD             remove the assignments of pod POD (drained)\n"
                      "  --fit                  repair the state for the machine of SOURCE (this\n"
                      "                         machine by default): the shared pool becomes "
                      "every\n"
                      "                         CPU (less --reserved with --strict) not held by a\n"
                      "                         container, so the kubelet starts without a drain;\n"
                      "                         refused, naming the container, when an assignment\n"
                      "                         cannot be kept (CPUs gone, reserved or shared)\n"
                      "  --reserved LIST        with --fit: the reserved CPUs "
                      "(reservedSystemCPUs)\n"
                      "  --strict               with --fit: strict-cpu-reservation is on\n"
                      "  --reserved-memory SPEC memory_manager_state with --fit: the reservation\n"
                      "                         (the kubelet's --reserved-memory syntax); --fit\n"
                      "                         rebuilds the machine state for SOURCE keeping\n"
                      "                         every assignment\n"
                      "  --kubelet-version X.Y  read the file as that release does and write its\n"
                      "                         layout (cpu_manager_state: V2 up to 1.36, V4\n"
                      "                         from 1.37; default: the file's own)\n"
                      "  -h, --help             show this help\n\n" CLI_SOURCE_HELP
                      "\nExit status: 0 written, 1 the file fails verification or cannot be\n"
                      "fitted, 2 bad usage or a file that cannot be read or "
                      "written,\n" CLI_EXIT_ENV,
                      f);
                break;
        }
}

/* Which options each subcommand takes. */
static bool allowed(sub which, int opt)
{
        switch (opt) {
        case OPT_JSON:
                return which == SUB_SHOW;
        case OPT_RESERVED:
                return true;
        case OPT_STRICT:
        case CLI_OPT_FSROOT:
        case CLI_OPT_SYNTHETIC:
        case CLI_OPT_XML:
        case CLI_OPT_TOPOLOGY:
                return which != SUB_SHOW;
        case OPT_POLICY:
        case OPT_CONTAINER:
                return which != SUB_SHOW;
        case OPT_OUTPUT:
        case OPT_FIX_CHECKSUM:
        case OPT_FIT:
        case OPT_DROP:
                return which == SUB_REWRITE;
        case OPT_RESERVED_MEMORY:
                return which != SUB_SHOW;
        case OPT_KUBELET_VERSION:
                return true;
        default:
                return true;
        }
}

/* "ID=POD/NAME" into a reference pointing into ARG (which is modified). */
static bool parse_container(char *arg, ncm_container_ref *ref)
{
        char *eq = strchr(arg, '=');
        char *slash = eq ? strrchr(eq + 1, '/') : NULL;
        if (!eq || !slash || eq == arg || slash == eq + 1 || !slash[1])
                return false;
        *eq = '\0';
        *slash = '\0';
        ref->container_id = arg;
        ref->pod_uid = eq + 1;
        ref->container_name = slash + 1;
        return true;
}

/* The lock of the directory holding PATH (a node's lock file beside the kubelet's files). */
static int lock_dir_of(const char *path, int *ret_fd, ncm_error *err)
{
        ncm_autofree char *copy = strdup(path);
        const char *slash;
        int fd;

        if (!copy || strcmp(path, "-") == 0)
                return copy ? 0 : ncm_error_set(err, ENOMEM, "out of memory");
        slash = strrchr(copy, '/');
        if (slash)
                copy[slash - copy + (slash == copy)] = '\0';
        fd = ncm_node_dir_lock(slash ? copy : ".", 0, err);
        if (fd < 0)
                return fd;
        *ret_fd = fd;
        return 0;
}

static int run_sub(sub which, int argc, char **argv)
{
        static const struct option opts[] = {
                        CLI_SOURCE_OPTIONS,
                        {"json", no_argument, NULL, OPT_JSON},
                        {"policy", required_argument, NULL, OPT_POLICY},
                        {"reserved", required_argument, NULL, OPT_RESERVED},
                        {"strict", no_argument, NULL, OPT_STRICT},
                        {"container", required_argument, NULL, OPT_CONTAINER},
                        {"output", required_argument, NULL, OPT_OUTPUT},
                        {"fix-checksum", no_argument, NULL, OPT_FIX_CHECKSUM},
                        {"fit", no_argument, NULL, OPT_FIT},
                        {"drop", required_argument, NULL, OPT_DROP},
                        {"reserved-memory", required_argument, NULL, OPT_RESERVED_MEMORY},
                        {"kubelet-version", required_argument, NULL, OPT_KUBELET_VERSION},
                        {"help", no_argument, NULL, 'h'},
                        {NULL, 0, NULL, 0},
        };
        char cmd[32];
        ncm_checkpoint_args a = {0};
        cli_source src = CLI_SOURCE_INIT;
        ncm_autoptr(ncm_cpuset) reserved = NULL;
        ncm_autoptr(ncm_topo) topo = NULL;
        ncm_autofree ncm_container_ref *refs = NULL;
        ncm_autofree char **drop = NULL;
        ncm_autofree char *text = NULL;
        ncm_error err = NCM_ERROR_INIT;
        ncm_buf out = NCM_BUF_INIT;
        ncm_autoclose int lockfd = -1;
        const ncm_checkpoint_kind *kind = NULL;
        ncm_buf warnings = NCM_BUF_INIT;
        char desc[4096];
        bool want_machine = false;
        int c, r;

        snprintf(cmd, sizeof(cmd), "checkpoint %s", sub_names[which]);
        refs = calloc((size_t)argc, sizeof(*refs));
        drop = calloc((size_t)argc, sizeof(*drop));
        if (!refs || !drop)
                return cli_fail(-ENOMEM, NULL);
        opterr = 0;
        optind = 0;
        /* No '+': FILE may come before or after the options. */
        while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
                if (c != 'h' && c != ':' && c != '?' && !allowed(which, c))
                        return cli_usage_error(cmd, "option '%s' does not apply here",
                                               argv[optind - 1]);
                if (cli_source_option(&src, c, optarg)) {
                        want_machine = true;
                        continue;
                }
                switch (c) {
                case OPT_JSON:
                        a.json = true;
                        break;
                case OPT_POLICY:
                        a.policy = optarg;
                        break;
                case OPT_RESERVED:
                        reserved = ncm_cpuset_free(reserved);
                        if (ncm_cpuset_parse_list(optarg, &reserved, &err) < 0)
                                return cli_usage_error(cmd, "--reserved '%s': %s", optarg, err.msg);
                        want_machine = true;
                        break;
                case OPT_STRICT:
                        a.strict = true;
                        want_machine = true;
                        break;
                case OPT_CONTAINER:
                        if (!parse_container(optarg, &refs[a.nrefs]))
                                return cli_usage_error(cmd,
                                                       "--container '%s': expected ID=POD/NAME",
                                                       optarg);
                        a.nrefs++;
                        break;
                case OPT_OUTPUT:
                        a.output = optarg;
                        break;
                case OPT_FIX_CHECKSUM:
                        a.fix_checksum = true;
                        break;
                case OPT_FIT:
                        a.fit = true;
                        break;
                case OPT_DROP:
                        drop[a.ndrop++] = optarg;
                        break;
                case OPT_RESERVED_MEMORY:
                        a.reserved_memory = optarg;
                        want_machine = true;
                        break;
                case OPT_KUBELET_VERSION:
                        if (ncm_kubelet_version_parse(optarg, &a.kubelet_version, &err) < 0 ||
                            ncm_kubelet_version_check(a.kubelet_version, &err) < 0)
                                return cli_usage_error(cmd, "--kubelet-version '%s': %s", optarg,
                                                       err.msg);
                        a.has_kubelet_version = true;
                        break;
                case 'h':
                        usage_sub(which, stdout);
                        return 0;
                case ':':
                        return cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
                default:
                        return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
                }
        }
        if (optind >= argc)
                return cli_usage_error(cmd, "missing FILE");
        if (optind + 1 < argc)
                return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind + 1]);
        if (cli_source_check(&src, cmd) != 0)
                return 2;
        /* show only marks --reserved; rewrite needs a machine only to --fit. */
        if (which == SUB_SHOW)
                want_machine = false;
        if (which == SUB_REWRITE && want_machine && !a.fit)
                return cli_usage_error(cmd, "a topology source, --reserved and --strict go with "
                                            "--fit");
        if (a.fit)
                want_machine = true;
        a.path = argv[optind];
        a.reserved = reserved;
        a.refs = refs;
        a.drop = drop;

        r = ncm_fs_read_all(AT_FDCWD, a.path, CHECKPOINT_MAX_SIZE, &text, &a.len, &err);
        if (r < 0)
                return cli_fail(r, &err);
        a.text = text;

        /* The kind, from the content. */
        r = ncm_checkpoint_probe(&a, &kind, &err);
        if (r < 0)
                return cli_fail(r, &err);
        if (want_machine) {
                r = cli_source_load(&src, &topo, &err);
                if (r < 0)
                        return cli_fail(r, &err);
                a.topo = topo;
                a.topo_desc = cli_source_describe(&src, desc, sizeof(desc));
        }

        a.warnings = &warnings;
        switch (which) {
        case SUB_VERIFY:
                r = ncm_checkpoint_verify(kind, &a, &out, &err);
                break;
        case SUB_SHOW:
                r = ncm_checkpoint_show(kind, &a, &out, &err);
                break;
        case SUB_REWRITE:
                /* the directory of the file written is a node's: rewrite under its lock */
                r = lock_dir_of(a.output ? a.output : a.path, &lockfd, &err);
                if (r >= 0)
                        r = ncm_checkpoint_rewrite(kind, &a, &out, &err);
                break;
        }
        for (const char *w = warnings.data; w && *w;) {
                size_t len = strcspn(w, "\n");
                fprintf(stderr, "nodecm: warning: %.*s\n", (int)len, w);
                w += len + (w[len] == '\n');
        }
        ncm_buf_done(&warnings);
        if (r < 0) {
                ncm_buf_done(&out);
                return cli_fail(r, &err);
        }
        return cli_emit_buf(&out);
}

int cmd_checkpoint(int argc, char **argv)
{
        if (argc < 2) {
                usage(stderr);
                return 2;
        }
        if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
            strcmp(argv[1], "help") == 0) {
                usage(stdout);
                return 0;
        }
        for (size_t i = 0; i < NCM_ELEMENTSOF(sub_names); i++)
                if (strcmp(argv[1], sub_names[i]) == 0)
                        return run_sub((sub)i, argc - 1, argv + 1);
        return cli_usage_error("checkpoint", "unknown subcommand '%s'", argv[1]);
}
