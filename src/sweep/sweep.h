/* sweep.h: design-space sweeps: a base scenario, axes over any key path, constraints, and
 * one result row per point x schedule, in a deterministic order whatever the thread count.
 *
 * A point is a set of `--set`-style overrides on the base scenario. Axes are crossed (the
 * last one varies fastest); axes in one `zip` group vary together. Points are numbered from
 * 0 in that order; a shard K/N runs the points with point % N == K - 1, and merging the
 * shards' rows by point gives the single-run output byte for byte.
 */
#pragma once

#include <glib.h>
#include "scenario/scenario.h"

G_BEGIN_DECLS

/* ---- constraint expressions (sweep-expr.c) ------------------------------------------- */

typedef struct PpsimSweepExpr PpsimSweepExpr;

/* The value of key path @path (aliases resolved: m, p, pp, v, chunks, mbs, layers, hidden,
 * heads, seq_len), or FALSE when there is none. */
typedef gboolean (*PpsimSweepLookup)(const char *path, double *out, gpointer data);

/* Parses "m % pp == 0 && layers >= 2 * pp": numbers, names, + - * / %, comparisons, && ||
 * ! (or the words and, or, not), parentheses. Errors: PPSIM_SCENARIO_ERROR_PARSE naming the
 * column. Returns: (transfer full) (nullable). */
PpsimSweepExpr *ppsim_sweep_expr_parse(const char *text, GError **error);
void ppsim_sweep_expr_free(PpsimSweepExpr *e);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PpsimSweepExpr, ppsim_sweep_expr_free)
/* Evaluates @e (non-zero is true). Errors: an unknown name, a division by zero. */
gboolean ppsim_sweep_expr_eval(const PpsimSweepExpr *e, PpsimSweepLookup lookup, gpointer data,
                               gboolean *out, GError **error);

/* ---- the sweep (sweep-file.c) ----------------------------------------------------------- */

typedef struct {
    char *path;        /* key path, e.g. "training.microbatches", or "schedule" */
    GPtrArray *values; /* char*: each value as YAML flow text, the override's right side */
    GPtrArray *labels; /* char*: each value as the CSV shows it */
    PpsimMark mark;    /* of the axis in the sweep file (0:0 for --grid) */
    int group;         /* axes of one zip group share it; groups are crossed */
} PpsimSweepAxis;

typedef struct {
    char *display;          /* the sweep file's name, or "--grid" */
    char *scenario_path;    /* the base scenario's name in errors */
    char *basedir;          /* for relative schedule files */
    char *base;             /* the base scenario's YAML text */
    GPtrArray *sets;        /* char* "key.path=value" applied to every point */
    GPtrArray *axes;        /* PpsimSweepAxis* in column order */
    int n_groups;           /* crossed groups, the last varying fastest */
    guint *group_len;       /* [n_groups] */
    GPtrArray *constraints; /* PpsimSweepExpr*: a point runs only where all hold */
    GPtrArray *metrics;     /* const char* (static): metric columns, in order */
    PpsimScenario *base_sc; /* the base with `sets`, for names no axis sets (with a point's
                               values when `sets` alone are not a whole layout) */
    GError *base_error;     /* while loading: why the base with `sets` alone failed */
    guint64 n_points;
    int samples;  /* Monte-Carlo replays per point and schedule (0: none; --samples) */
    guint64 seed; /* their seed (--seed) */
    /* A ladder of memory plans (`ppsim search`; NULL otherwise): per point and schedule,
     * the rungs are tried in order and the first that fits is the row; a rung whose static
     * memory alone (weights, gradients, optimizer states, averaged over the pipeline's
     * devices) exceeds the limit is pruned without a replay. Rung values are columns after
     * the axes. */
    GPtrArray *rung_paths; /* char*: the key paths a rung sets */
    GPtrArray *rungs;      /* GStrv: one value per rung path */
} PpsimSweep;

/* Loads a sweep file (YAML):
 *   scenario: path/to/base.yaml     # relative to the sweep file; or an inline mapping
 *   set: {key.path: value, ...}     # fixed overrides, optional
 *   axes: {key.path: [v1, v2], key2: {from: 2, to: 16, step: 2}, key3: {from: 4, to: 64,
 *          times: 2}, schedule: [1f1b, {name: po-h, co_schedule: independent}]}
 *   zip: [{key.a: [..], key.b: [..]}]  # each group varies together (equal lengths)
 *   constraints: ["m % pp == 0"]
 *   columns: [makespan_ms, peak_memory]  # metric columns (default: all)
 * Every axis value is tried on the base scenario, so a path that does not exist, a value of
 * the wrong type or an empty axis fails here, naming the sweep file's line and column.
 * Returns: (transfer full) (nullable). */
PpsimSweep *ppsim_sweep_load_file(const char *path, GError **error);
/* The ad-hoc form: `ppsim run SCENARIO --set ... --grid key=a,b,c` (a value list, or a YAML
 * list `key=[a, {name: x}]`). Returns: (transfer full) (nullable). */
PpsimSweep *ppsim_sweep_new_grid(const char *scenario_path, char **sets, char **grid,
                                 GError **error);
/* A sweep over an explicit list of points: @points holds a GStrv per point, one value per
 * key path of @paths (a YAML flow value each, e.g. "4" or "{name: zb}"); every point also
 * takes @sets. @rung_paths and @rungs (nullable) make the ladder described above. Values are
 * not tried on the base: the caller built them. Returns: (transfer full) (nullable). */
PpsimSweep *ppsim_sweep_new_points(const char *scenario_path, char **sets, char **paths,
                                   const GPtrArray *points, char **rung_paths,
                                   const GPtrArray *rungs, GError **error);
void ppsim_sweep_free(PpsimSweep *sweep);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PpsimSweep, ppsim_sweep_free)

/* `--samples N --seed S` on a sweep: every point's schedules are also replayed N times
 * under the scenario's variability (sim.h ppsim_sim_sample, one thread per point), and the
 * columns makespan_mean_ms, makespan_p50_ms, makespan_p90_ms and makespan_p99_ms are added
 * unless the sweep's columns already name them. */
void ppsim_sweep_set_samples(PpsimSweep *sweep, int samples, guint64 seed);

/* The value index of every axis at @point ([axes->len]). */
void ppsim_sweep_point_values(const PpsimSweep *sweep, guint64 point, guint *index);

/* All metric column names, NULL-terminated (static). */
const char *const *ppsim_sweep_metric_names(void);

/* ---- running (sweep-run.c, sweep-point.c, sweep-ladder.c; rows: sweep-row.c) ------- */

typedef enum {
    PPSIM_SWEEP_CSV,
    PPSIM_SWEEP_JSONL,
} PpsimSweepFormat;

/* One row as kept for summaries (numbers in the row's memory unit). */
typedef struct {
    guint64 point;
    char **labels; /* values of the axis columns (every axis but `schedule`), as in the
                    * CSV; NULL-terminated */
    char *schedule;
    char *status; /* ok | refused | invalid | failed | pruned (a ladder's rungs all pruned:
                   * peak_memory then holds the smallest static memory it would need) */
    gboolean has_metrics;
    double makespan_ms, bubble_ratio, peak_activation, peak_memory;
    gboolean oom;
    char *memory_unit;
    /* Tokens of the iteration and tokens/s: 0 when unknown (a CSV without the column).
     * Summaries rank by tokens/s when the tokens differ between rows, else by makespan. */
    double tokens, tokens_per_s;
    double mfu; /* 0 when unknown */
} PpsimSweepRow;

void ppsim_sweep_row_free(PpsimSweepRow *row);

/* Writes @len bytes of output; returns FALSE with @error set when it cannot. */
typedef gboolean (*PpsimSweepWriteFunc)(const char *data, gsize len, gpointer user_data,
                                        GError **error);
/* Called after each point with the number of points done and to do (for a progress bar). */
typedef void (*PpsimSweepProgressFunc)(guint64 done, guint64 total, gpointer user_data);

typedef struct {
    int threads;          /* >= 1 */
    int shard_k, shard_n; /* 1-based shard K of N; N = 1 runs everything */
    guint64 resume_after; /* run only points > this (G_MAXUINT64: from the start) */
    PpsimSweepFormat format;
    PpsimSweepWriteFunc write;
    gpointer write_data;
    PpsimSweepProgressFunc progress; /* nullable */
    gpointer progress_data;
} PpsimSweepRunOptions;

/* The header line of the CSV output (with its newline). Returns: (transfer full). */
char *ppsim_sweep_csv_header(const PpsimSweep *sweep);

/* Runs the points of @opts's shard on a thread pool, writing rows through opts->write in
 * point order (then the scenario's schedule order) as they complete; a point whose
 * scenario, schedule or replay fails is a row with its status and error, never an abort.
 * Appends every row written to @rows (PpsimSweepRow*, nullable). Only a write failure stops
 * the run (FALSE). */
gboolean ppsim_sweep_run(const PpsimSweep *sweep, const PpsimSweepRunOptions *opts, GPtrArray *rows,
                         GError **error);

/* A shard's rows file starts with the line "# ppsim sweep shard K/N" (before the header), so
 * that a merge can tell a missing shard. Returns the length of that line (0: none) and sets
 * *@k, *@n (nullable). ppsim_sweep_parse_csv skips it. */
gsize ppsim_sweep_shard_line(const char *text, gsize len, int *k, int *n);

/* Parses CSV rows written by ppsim_sweep_run for @sweep's columns, or by any sweep when
 * @sweep is NULL (axis columns are those between `point` and `schedule`). @text holds whole
 * lines; the header, when present, must match @header (nullable). Appends PpsimSweepRow* to
 * @rows and the byte offset where each row starts to @offsets (nullable).
 * Errors name @display's line. */
gboolean ppsim_sweep_parse_csv(const char *text, gsize len, const char *display, const char *header,
                               GPtrArray *rows, GArray *offsets, GError **error);

/* ---- summaries (sweep-summary.c; plots: sweep-plot.c) ---------------------------------- */

/* Appends the human summary of @rows: counts by status, the fastest configuration that fits
 * (no device out of memory), overall and per schedule, and the Pareto front of makespan
 * against peak memory. @axis_names ([n_axes]): the axis columns, as the rows' labels. */
void ppsim_sweep_summary(GString *out, const GPtrArray *rows, char **axis_names, int n_axes);
/* SVG of the Pareto front (every fitting row as a dot, the front as a line, its points
 * labelled with their axis values): tokens/s when the work differs between rows (as the
 * summary ranks), else makespan, against peak memory; @limit (> 0, the rows' memory unit)
 * as a dashed line. */
void ppsim_sweep_svg_pareto(GString *out, const GPtrArray *rows, char **axis_names, int n_axes,
                            double limit);
/* SVG of a search: tokens/s against peak memory of every row that ran (fitting rows
 * coloured by schedule, the rest grey), the Pareto front labelled with its layouts, and the
 * memory limit @limit (in the rows' memory unit) as a vertical line. */
void ppsim_sweep_svg_search(GString *out, const GPtrArray *rows, char **axis_names, int n_axes,
                            double limit);
/* SVG of bubble ratio against the axis @m_axis (index into the axes; the microbatch count),
 * one curve per schedule and combination of the other axes. */
void ppsim_sweep_svg_bubble(GString *out, const GPtrArray *rows, char **axis_names, int n_axes,
                            int m_axis);

G_END_DECLS
