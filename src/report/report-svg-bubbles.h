/* report-svg-bubbles.h: the bubble breakdown of one replay as stacked bars, for the SVG
 * timeline (report-svg.c calls it; kept apart so the timeline and the bars evolve alone). */
#pragma once

#include <glib.h>
#include "sim/run-result.h"

G_BEGIN_DECLS

/* Appends to @out, from the top-left corner (@x, @y) and @width pixels wide, a heading, a
 * legend and one horizontal bar per device of @res: its lost time (run-result.h
 * bubble_lost_ps) stacked as recompute, imbalance, warm-up/cool-down, transfer and offload,
 * on a scale where @width is the makespan. Returns the y under the drawing. */
double ppsim_report_svg_bubbles(GString *out, const PpsimRunResult *res, double x, double y,
                                double width);

G_END_DECLS
