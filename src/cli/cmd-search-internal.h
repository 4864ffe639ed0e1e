/* cmd-search-internal.h: the parts of `ppsim search` (cmd-search.c) shared by its files:
 * the layouts to try (cmd-search-layouts.c) and the report of the rows
 * (cmd-search-report.c). Not part of the library's interface. */
#pragma once

#include <glib.h>
#include "scenario/scenario.h"
#include "sweep/sweep.h"

G_BEGIN_DECLS

/* --plan: the planner's layer split and per-stage recompute for one of the top layouts,
 * replayed. */
typedef struct {
    gboolean done; /* the planner took the layout */
    char *why;     /* when it did not: its error */
    double tokens_per_s, peak_memory;
    gboolean fits;
    char *split; /* "[10 10 9f ...]": layers per stage, s/f = selective/full recompute */
} Planned;

/* The axis columns of a search's points, in order (the CSV's columns after `point`). */
extern const char *const ppsim_cli_search_paths[];
enum {
    COL_TP,
    COL_PP,
    COL_TPP,
    COL_DP,
    COL_MBS,
    COL_M,
    COL_V,
    COL_NODES,
    COL_GPN,
    COL_CP,
    COL_EP,
    COL_ETP,
    N_AXIS_COLS
};
/* The columns of the memory plan, after the axes (the sweep's rung columns). */
enum { COL_RECOMPUTE = N_AXIS_COLS, COL_ZERO };
/* Their scenario keys, in that order (cmd-search-layouts.c). */
extern const char *const ppsim_cli_search_rung_paths[];

/* cmd-search-layouts.c. */
/* The ladder of memory plans, cheapest in time first: one GStrv per rung, its values in
 * the order of ppsim_cli_search_rung_paths (transfer full). */
GPtrArray *ppsim_cli_search_rungs(const PpsimScenario *sc);
/* The generators to try for --schedules @names (nullable: the default set); NULL with
 * @error set on an unknown or unsearchable name. */
GPtrArray *ppsim_cli_search_schedules(char **names, GError **error);
/* The points of @n GPUs for @sc with global batch @batch and the generators @classes: one
 * GStrv per layout and schedule (transfer full). */
GPtrArray *ppsim_cli_search_points(const PpsimScenario *sc, int n, int batch,
                                   const GPtrArray *classes);
/* The GPU counts nearest @n, below and above, that have a layout (0: none found). */
void ppsim_cli_search_nearest_counts(const PpsimScenario *sc, int n, int batch, int *below,
                                     int *above);

/* cmd-search-report.c. */
/* Whether row @r replayed and fits the memory limit. */
gboolean ppsim_cli_search_row_fits(const PpsimSweepRow *r);
/* The ranking of the rows, for g_ptr_array_sort: fitting rows by tokens/s, then the rest. */
int ppsim_cli_search_cmp_rank(gconstpointer pa, gconstpointer pb);
/* Row @r's value in column @col, "" when it has none. */
const char *ppsim_cli_search_label(const PpsimSweepRow *r, int col);
/* The text report: the counts, the top @top fitting rows of the sorted @rows, and with
 * @planned (nullable, [top]) their --plan splits. */
void ppsim_cli_search_report_text(GString *out, const PpsimScenario *sc, int n,
                                  const GPtrArray *rows, int top, const Planned *planned);
/* The JSON report: every row of the sorted @rows, the first @n_planned with their --plan
 * result from @planned (nullable). */
void ppsim_cli_search_report_json(GString *out, const PpsimScenario *sc, int n,
                                  const GPtrArray *rows, const Planned *planned, guint n_planned);
/* Prints why no layout fits to stderr; returns PPSIM_EXIT_FAILURE. */
int ppsim_cli_search_report_none_fits(const PpsimScenario *sc, int n, const GPtrArray *rows);

G_END_DECLS
