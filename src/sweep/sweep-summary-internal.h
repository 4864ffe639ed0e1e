/* sweep-summary-internal.h: what sweep-plot.c (the SVG plots) shares with sweep-summary.c
 * (the text summary): which rows fit, their unit and ranking, the Pareto front. Not for
 * other folders. */
#pragma once

#include "sweep/sweep.h"

/* Rows that ran and fit (no device out of memory). */
gboolean ppsim_sweep_row_fits(const PpsimSweepRow *r);
/* Whether the rows' memory unit is bytes (that of the first row with metrics). */
gboolean ppsim_sweep_rows_in_bytes(const GPtrArray *rows);
/* Whether the rows' work differs: then rows rank by tokens/s rather than makespan. */
gboolean ppsim_sweep_rows_by_throughput(const GPtrArray *rows);
/* The rows on the Pareto front of (makespan, or tokens/s when @by_tput, peak memory) among
 * those that fit, fastest first. Returns: (transfer container). */
GPtrArray *ppsim_sweep_pareto_front(const GPtrArray *rows, gboolean by_tput);
