/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The nodecm command: one cmd_<name>() per subcommand (cmd-<name>.c), each returning the exit
 * status of DESIGN.md (0 done, 1 cannot be met, 2 bad usage or input).
 */
#ifndef NODECM_CLI_H
#define NODECM_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <nodecm/buf.h>
#include <nodecm/error.h>

typedef struct cli_command {
        const char *name;
        const char *summary;
        int (*run)(int argc, char **argv);
} cli_command;

/*
 * Report the failure of a library call that returned R (a negative errno or NCM_E_* code) and
 * filled ERR: print "nodecm: <msg>" on stderr and return the exit status of ERR's code, or of R
 * when ERR is NULL or was left unset (a bare -ENOMEM, say), so that no failure exits 0.
 */
int cli_fail(int r, const ncm_error *err);
/* Print "nodecm <cmd>: <formatted message>" on stderr and return 2 (usage error). */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * Write the whole of TEXT to stdout and flush; on failure (e.g. a closed pipe or a full disk)
 * print the error and return 2. Commands build their output in memory first so that a failure
 * never leaves partial output.
 */
int cli_emit(const char *text, size_t len);
/*
 * cli_emit() the contents of OUT and release it. An append that ran out of memory is reported
 * (exit 2) instead, with nothing on stdout.
 */
int cli_emit_buf(ncm_buf *out);

/* The end of every command's "Exit status:" paragraph (ncm_error_exit_status()). */
#define CLI_EXIT_ENV                                                                               \
        "3 the environment failed and a retry may succeed (a full or read-only\n"                  \
        "disk, an I/O error, no memory).\n"

/* A subcommand: its name and how many arguments it takes. */
typedef struct cli_sub {
        const char *name;
        size_t min, max;
        const char *what; /* "one POD file", for the usage error */
        /* its own help page: "SUB ARGS [OPTIONS]" and what it does (NULL: the command's) */
        const char *synopsis;
        const char *about;
} cli_sub;

/* What cli_subcommand() found. */
typedef struct cli_parsed {
        size_t sub;         /* index into the table */
        char name[40];      /* "cgroup apply", for messages */
        const char *pos[4]; /* the arguments; NULL past the last */
} cli_parsed;

typedef int (*cli_option_fn)(void *ud, int c, const char *name, const char *value);

/*
 * "nodecm CMD SUB [OPTIONS] ARGS" (ARGV[0] is CMD): SUB looked up in SUBS (N), --help, the
 * options of OPTS handed to OPTION (which returns 0 or an exit status), unknown or incomplete
 * options and the number of arguments checked. Returns 0 to go on, an exit status to stop with,
 * or -1 when the help was printed (exit 0). "CMD --help" prints USAGE; "CMD SUB --help" SUB's
 * own page: its synopsis and about, then OPTIONS (what every subcommand takes), or USAGE when
 * SUB has none.
 */
int cli_subcommand(int argc, char **argv, const char *cmd, const cli_sub *subs, size_t n,
                   const struct option *opts, cli_option_fn option, void *ud,
                   void (*usage)(FILE *f), void (*options)(FILE *f), cli_parsed *ret);

int cmd_topology(int argc, char **argv);
int cmd_take(int argc, char **argv);
int cmd_hints(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_simulate(int argc, char **argv);
int cmd_checkpoint(int argc, char **argv);
int cmd_cgroup(int argc, char **argv);
int cmd_node_allocatable(int argc, char **argv);
int cmd_node(int argc, char **argv);
int cmd_oci_hook(int argc, char **argv);
int cmd_devices(int argc, char **argv);

#endif
