/* sweep-run-internal.h: what the runner's files share: sweep-run.c (the pool), sweep-point.c
 * (one point), sweep-ladder.c (a ladder sweep's point) and sweep-row.c (rows). Not for other
 * folders. */
#pragma once

#include "sim/sim.h"
#include "sweep/sweep.h"

/* Whether axis @a is a column of the rows (every axis but `schedule`: the schedule column
 * shows it). */
gboolean ppsim_sweep_axis_is_column(const PpsimSweepAxis *a);

/* Formats one row into @out and keeps it in @rows. @res is NULL for a row without metrics;
 * @rung: the ladder rung's values (NULL: empty cells; ignored without a ladder); @bound
 * (bytes, > 0 for a pruned row): shown as its peak_memory. */
void ppsim_sweep_row_emit_rung(const PpsimSweep *s, PpsimSweepFormat fmt, guint64 point,
                               const guint *index, char **rung, const char *schedule,
                               const char *status, const PpsimRunResult *res, gint64 bound,
                               const char *error, GString *out, GPtrArray *rows);
/* ppsim_sweep_row_emit_rung without a rung or a bound. */
void ppsim_sweep_row_emit(const PpsimSweep *s, PpsimSweepFormat fmt, guint64 point,
                          const guint *index, const char *schedule, const char *status,
                          const PpsimRunResult *res, const char *error, GString *out,
                          GPtrArray *rows);

/* The status column of a row whose scenario, schedule or replay failed with @e: refused,
 * invalid or failed. */
const char *ppsim_sweep_status_of(const GError *e);

/* Computes every row of @point into @out and @rows. */
void ppsim_sweep_point_run(const PpsimSweep *s, PpsimSweepFormat fmt, guint64 point, GString *out,
                           GPtrArray *rows);
/* A point of a ladder sweep: per schedule, the first rung that fits (see sweep.h). @index:
 * the point's value index per axis; @ov: its overrides (NULL-terminated). */
void ppsim_sweep_point_run_ladder(const PpsimSweep *s, PpsimSweepFormat fmt, guint64 point,
                                  const guint *index, GPtrArray *ov, GString *out, GPtrArray *rows);
