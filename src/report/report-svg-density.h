/* report-svg-density.h: utilisation density of timeline lanes, for SVG timelines whose blocks
 * are narrower than a few pixels (internal to src/report). Pure: ops and timings -> runs. */
#pragma once

#include <glib.h>
#include "sim/run-result.h"

G_BEGIN_DECLS

/* Opacity steps of a density run: level / PPSIM_SVG_DENSITY_LEVELS of the column busy. */
#define PPSIM_SVG_DENSITY_LEVELS 20

/* Consecutive pixel columns [first, first + n) of one lane in which one op kind has the same
 * share of the time: each column is a stack of its kinds, in kind order from the bottom, each
 * as tall as its share (so 1F1B's forwards show beside its twice-longer backwards). Levels
 * are 1/PPSIM_SVG_DENSITY_LEVELS of the lane's height; a column with any busy time has at
 * least one level. */
typedef struct {
    int first, n;
    int kind;   /* PpsimOpKind */
    int level;  /* the kind's share of each column, in levels (>= 1) */
    int offset; /* levels of the kinds stacked below it */
} PpsimSvgDensityRun;

typedef struct PpsimSvgDensity PpsimSvgDensity;

/* An empty lane of @columns pixel columns spanning [@t0, @t1), @t1 > @t0, over @width pixels
 * (columns = ceil(width)). */
PpsimSvgDensity *ppsim_svg_density_new(PpsimTime t0, PpsimTime t1, double width);
void ppsim_svg_density_free(PpsimSvgDensity *d);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PpsimSvgDensity, ppsim_svg_density_free)

/* Adds the busy time of the ops of @ops (PpsimOp) / @timing (PpsimOpTiming) whose
 * PPSIM_OP_FLAG_CPU flag is @cpu. */
void ppsim_svg_density_add(PpsimSvgDensity *d, const GArray *ops, const GArray *timing,
                           gboolean cpu);
/* Forgets the ops added so far (the next lane). */
void ppsim_svg_density_reset(PpsimSvgDensity *d);
/* The lane as runs (PpsimSvgDensityRun), in order of their first column, then kind; empty
 * columns have none. The shares are rounded cumulatively, so a column's levels add up to its
 * busy share rounded. */
GArray *ppsim_svg_density_runs(const PpsimSvgDensity *d);

/* TRUE when some device's compute lane has more ops in [@t0, @t1) than @width / 4: blocks
 * would average under four pixels, so the timeline is drawn as density. */
gboolean ppsim_svg_density_wanted(const PpsimRunResult *res, PpsimTime t0, PpsimTime t1,
                                  double width);

G_END_DECLS
