/* cli.h: the subcommands of `ppsim` (git's builtin/ shape). Each parses its own options and
 * calls into the library; only this layer prints or picks exit codes.
 */
#pragma once

#include <glib.h>
#include "sweep/sweep.h"

G_BEGIN_DECLS

enum {
    PPSIM_EXIT_OK = 0,
    PPSIM_EXIT_FAILURE = 1, /* bad scenario, deadlock, I/O, failed validation */
    PPSIM_EXIT_USAGE = 2,   /* bad flag, unknown command */
};

typedef int (*PpsimCommandFunc)(int argc, char **argv);

typedef struct {
    const char *name;
    PpsimCommandFunc run;
    const char *summary;
} PpsimCommand;

int ppsim_cmd_run(int argc, char **argv);
int ppsim_cmd_check(int argc, char **argv);
int ppsim_cmd_list(int argc, char **argv);
int ppsim_cmd_validate(int argc, char **argv);
int ppsim_cmd_sweep(int argc, char **argv);
int ppsim_cmd_merge(int argc, char **argv);
int ppsim_cmd_plan(int argc, char **argv);
int ppsim_cmd_search(int argc, char **argv);
int ppsim_cmd_calibrate(int argc, char **argv);

/* Options of a sweep run, shared by `ppsim sweep` and `ppsim run --grid` (cmd-sweep.c). */
typedef struct {
    char *output; /* rows to this file; NULL: stdout */
    char *format; /* csv | jsonl */
    int threads;  /* 0: the core count */
    char *shard;  /* "K/N" or NULL */
    gboolean resume;
    char *plot; /* directory for the SVGs, or NULL */
    gboolean quiet;
    const char *progress_label; /* the progress bar's name; NULL: "sweep" */
} PpsimCliSweepOptions;

/* Runs @sweep as @o says: rows, then the summary and plots. Returns the exit code. */
int ppsim_cli_sweep(const PpsimSweep *sweep, const PpsimCliSweepOptions *o);
/* Only the rows (resumed, with the progress bar), appended to @rows. Returns the exit
 * code. */
int ppsim_cli_sweep_rows(const PpsimSweep *sweep, const PpsimCliSweepOptions *o, GPtrArray *rows);

/* Error and warning lines are printed with control characters escaped and cut after a few
 * KiB (util/quote.h), so that no message floods or garbles the terminal. */
/* Prints "ppsim: warning: MESSAGE" to stderr. */
void ppsim_cli_warning(const char *message);
/* Prints "ppsim: error: MESSAGE" to stderr and returns PPSIM_EXIT_FAILURE. */
int ppsim_cli_fail(const GError *error);
/* Prints "ppsim: error: MESSAGE" (printf-style) and returns PPSIM_EXIT_USAGE. */
int ppsim_cli_usage(const char *fmt, ...) G_GNUC_PRINTF(1, 2);
/* Prints "ppsim: error: @what '@input'" with @input quoted (util/quote.h) and returns
 * PPSIM_EXIT_USAGE. */
int ppsim_cli_usage_quoted(const char *what, const char *input);
/* Prints "ppsim: error: WHAT: <strerror(errno)>" and returns PPSIM_EXIT_FAILURE. */
int ppsim_cli_usage_io(const char *what);
/* Parses options; on error prints the message and a hint and returns FALSE. With --help,
 * GLib prints the help to stdout and exits 0. */
gboolean ppsim_cli_parse(GOptionContext *ctx, int *argc, char ***argv);
/* --with FILE.yaml...: each fragment's keys (ppsim_scenario_fragment_overrides) become
 * overrides, in order, before those of --set already in *@sets, which is replaced. */
gboolean ppsim_cli_with_overrides(char **with, char ***sets, GError **error);
/* Writes @data to @path: "-" is stdout; a regular file (or a new one) is replaced
 * atomically (temporary file + rename); a symbolic link is followed and its target replaced;
 * a FIFO or a device is written through, never replaced; a directory is an error. */
gboolean ppsim_cli_write_file(const char *path, const char *data, gsize len, GError **error);

G_END_DECLS
