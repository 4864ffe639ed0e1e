/* report-svg-density.c: a lane's busy time per pixel column and per op kind. Each op adds its
 * exact overlap with every column it touches (in pixels), so a column's share is its busy time
 * over its duration, independent of how many ops fall in it. Adjacent columns with the same
 * kind, share and place in the stack merge into one run, so a steady state is a few
 * rectangles. */
#include "report/report-svg-density.h"

#include <math.h>
#include <string.h>

struct PpsimSvgDensity {
    PpsimTime t0, t1;
    double width;
    int columns;
    double *busy; /* [kind * columns + column], in pixels (0..1 per column and kind) */
};

PpsimSvgDensity *
ppsim_svg_density_new(PpsimTime t0, PpsimTime t1, double width)
{
    g_return_val_if_fail(t1 > t0 && width > 0, NULL);
    PpsimSvgDensity *d = g_new0(PpsimSvgDensity, 1);
    d->t0 = t0;
    d->t1 = t1;
    d->width = width;
    d->columns = (int)ceil(width);
    d->busy = g_new0(double, (gsize)d->columns *PPSIM_OP_N_KINDS);
    return d;
}

void
ppsim_svg_density_free(PpsimSvgDensity *d)
{
    if (d == NULL)
        return;
    g_free(d->busy);
    g_free(d);
}

void
ppsim_svg_density_reset(PpsimSvgDensity *d)
{
    memset(d->busy, 0, sizeof(double) * (gsize)d->columns * PPSIM_OP_N_KINDS);
}

static double
density_x(const PpsimSvgDensity *d, PpsimTime t)
{
    return (double)(t - d->t0) / (double)(d->t1 - d->t0) * d->width;
}

void
ppsim_svg_density_add(PpsimSvgDensity *d, const GArray *ops, const GArray *timing, gboolean cpu)
{
    for (guint i = 0; i < ops->len; i++) {
        const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
        const PpsimOpTiming *t = &g_array_index(timing, PpsimOpTiming, i);
        if (t->end_ps <= d->t0 || t->start_ps >= d->t1 ||
            ((op->flags & PPSIM_OP_FLAG_CPU) != 0) != cpu)
            continue;
        double x0 = density_x(d, MAX(t->start_ps, d->t0));
        double x1 = MIN(density_x(d, MIN(t->end_ps, d->t1)), d->width);
        double *busy = &d->busy[(gsize)op->kind * d->columns];
        for (int c = (int)floor(x0); c < d->columns && c < x1; c++)
            busy[c] += MIN(x1, c + 1.0) - MAX(x0, (double)c);
    }
}

GArray *
ppsim_svg_density_runs(const PpsimSvgDensity *d)
{
    GArray *runs = g_array_new(FALSE, FALSE, sizeof(PpsimSvgDensityRun));
    int last[PPSIM_OP_N_KINDS]; /* per kind: index of its latest run, -1: none */
    for (int k = 0; k < PPSIM_OP_N_KINDS; k++)
        last[k] = -1;
    for (int c = 0; c < d->columns; c++) {
        double total = 0, best = 0;
        int busiest = 0;
        for (int k = 0; k < PPSIM_OP_N_KINDS; k++) {
            double b = d->busy[(gsize)k * d->columns + c];
            total += b;
            if (b > best)
                best = b, busiest = k;
        }
        if (total <= 0)
            continue;
        /* the last column may be narrower than a pixel; lanes that overlap (a copy lane with
         * a CPU worker's steps) are capped at fully busy */
        double span = MIN(1.0, d->width - c);
        double scale = MIN(1.0, span / total) / span; /* busy pixels -> share of the column */
        double cum = 0;
        int below = 0, levels[PPSIM_OP_N_KINDS] = {0}, sum = 0;
        for (int k = 0; k < PPSIM_OP_N_KINDS; k++) {
            cum += d->busy[(gsize)k * d->columns + c] * scale;
            int upto = (int)lround(MIN(cum, 1.0) * PPSIM_SVG_DENSITY_LEVELS);
            levels[k] = upto - below;
            below = upto;
            sum += levels[k];
        }
        if (sum == 0)
            levels[busiest] = 1; /* busy, if only a little: visible */
        int offset = 0;
        for (int k = 0; k < PPSIM_OP_N_KINDS; k++) {
            if (levels[k] <= 0)
                continue;
            PpsimSvgDensityRun *prev =
                last[k] >= 0 ? &g_array_index(runs, PpsimSvgDensityRun, last[k]) : NULL;
            if (prev && prev->first + prev->n == c && prev->level == levels[k] &&
                prev->offset == offset) {
                prev->n++;
            } else {
                PpsimSvgDensityRun run = {c, 1, k, levels[k], offset};
                g_array_append_val(runs, run);
                last[k] = (int)runs->len - 1;
            }
            offset += levels[k];
        }
    }
    return runs;
}

gboolean
ppsim_svg_density_wanted(const PpsimRunResult *res, PpsimTime t0, PpsimTime t1, double width)
{
    if (!(width >= 1) || t1 <= t0)
        return FALSE;
    for (int d = 0; d < res->p; d++) {
        GArray *timing = res->compute_timing[d];
        guint n = 0;
        for (guint i = 0; i < timing->len; i++) {
            const PpsimOpTiming *t = &g_array_index(timing, PpsimOpTiming, i);
            n += t->end_ps > t0 && t->start_ps < t1;
        }
        if (n > width / 4)
            return TRUE;
    }
    return FALSE;
}
