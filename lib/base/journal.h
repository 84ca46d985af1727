/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Internal: a generational JSON-lines journal, the one nodecm_pods and the CRI record
 * (nodecm_cri_containers) keep beside their file.
 *
 * A file written whole carries a generation G. What changes after it is appended to its
 * journal, one JSON object per line, each {"gen": G, ...}: O(change) on disk instead of
 * O(file). When the journal has grown past the records it amends by NCM__JOURNAL_SLACK lines
 * (and whenever its owner chooses), the file is written whole as G + 1 and the journal emptied
 * after it. Reading, lines of another generation than the file's are what a crash left between
 * the two (already in the file) and are skipped; a last line without its newline is an append
 * a crash cut short, and is ignored.
 */
#ifndef NCM_BASE_JOURNAL_H
#define NCM_BASE_JOURNAL_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <nodecm/buf.h>
#include <nodecm/error.h>
#include <nodecm/fs.h>

/* Lines a journal may hold beyond one per record before its file is rewritten. */
#define NCM__JOURNAL_SLACK 64

typedef struct ncm__journal {
        uint64_t gen; /* the generation of the file the journal amends */
        size_t lines; /* lines the journal holds (read at start, appended since) */
} ncm__journal;

/* Start a line of J in B: `{"gen": G, `; the owner puts its members, then ncm__journal_end(). */
void ncm__journal_begin(const ncm__journal *j, ncm_buf *b);
/* End the line in B: `}` and its newline. */
void ncm__journal_end(ncm_buf *b);

/*
 * Stage LINE (one or more whole lines, each ended by its newline) as an append to the journal
 * PATH in BATCH, written and fdatasynced by the batch's commit, and count its lines in J. A
 * dropped batch writes nothing: the owner puts J back (it kept a copy) with the rest of its
 * state. On failure J is as it was.
 */
int ncm__journal_append(ncm__journal *j, ncm_fs_batch *batch, const char *path, const ncm_buf *line,
                        ncm_error *err);

/* Whether J, with ADDING more lines, holds more than RECORDS + NCM__JOURNAL_SLACK lines:
 * the file it amends is due to be written whole. */
bool ncm__journal_over(const ncm__journal *j, size_t records, size_t adding);

/* The file was written whole as generation J->gen + 1 and the journal emptied after it. */
void ncm__journal_compacted(ncm__journal *j);

/* One line of the file's generation (WHERE names it in messages: "PATH: line 3"). */
typedef int (*ncm__journal_line_fn)(json_object *line, const char *where, void *userdata,
                                    ncm_error *err);

/*
 * Read the journal TEXT (LEN bytes) of a file at generation J->gen: each complete line is
 * parsed (an object with an integer "gen"), and those of J->gen are given to FN in order; the
 * others are skipped. Lines are named PATH SEP N in messages (SEP ": line " or ":", as the
 * file's owner has always named them). J->lines counts the complete lines; *RET_TORN (may be
 * NULL) tells whether a last line was cut short. The first error (FN's or a malformed line's)
 * ends the reading.
 */
int ncm__journal_read(ncm__journal *j, const char *text, size_t len, const char *path,
                      const char *sep, ncm__journal_line_fn fn, void *userdata, bool *ret_torn,
                      ncm_error *err);

#endif
