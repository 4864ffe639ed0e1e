/* report-svg.c: SVG timelines in the style of the papers' figures (e.g. [ZB] Fig. 3,
 * [PO] Fig. 4): one row per device, blocks coloured by op kind with microbatch numbers, a
 * thin copy lane for offload/reload, a time axis in ms, a legend, and each device's memory
 * curve (static + activations + buffers) with its peak and the limit. Runs too dense for blocks
 * are drawn as utilisation density (report-svg-density.c). Pure: results -> text.
 */
#include "report/report.h"
#include "report/report-svg-bubbles.h"
#include "report/report-svg-density.h"
#include "util/fmt.h"

#include <math.h>
#include <string.h>

#define SVG_LEFT 84
#define SVG_RIGHT 24
#define SVG_FONT "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\""

static const char *const kind_color[PPSIM_OP_N_KINDS] = {
    [PPSIM_OP_F] = "#4e79a7",   [PPSIM_OP_B] = "#59a14f",  [PPSIM_OP_W] = "#f28e2b",
    [PPSIM_OP_BW] = "#2f7d3a",  [PPSIM_OP_R] = "#b07aa1",  [PPSIM_OP_OPT] = "#e15759",
    [PPSIM_OP_OFF] = "#9c755f", [PPSIM_OP_RL] = "#bab0ac", [PPSIM_OP_GOFF] = "#76b7b2",
    [PPSIM_OP_WRL] = "#edc948",
};

static const char *const kind_label[PPSIM_OP_N_KINDS] = {
    [PPSIM_OP_F] = "F forward",    [PPSIM_OP_B] = "B input grad", [PPSIM_OP_W] = "W weight grad",
    [PPSIM_OP_BW] = "BW backward", [PPSIM_OP_R] = "R recompute",  [PPSIM_OP_OPT] = "OPT step",
    [PPSIM_OP_OFF] = "offload",    [PPSIM_OP_RL] = "reload",      [PPSIM_OP_GOFF] = "grad D2H",
    [PPSIM_OP_WRL] = "weight H2D",
};

typedef struct {
    GString *out;
    PpsimTime t0, t1;
    double plot_w; /* pixels for [t0, t1] */
    double row_h, copy_h, gap;
    gboolean copy_lane;
    gboolean cpu_lane; /* optimizer steps on host CPU workers (T-Offload): a lane of their own */
    int p;             /* devices of the result being drawn */
    /* blocks would average under a few pixels: each lane is drawn as its busy share per
     * pixel column instead (report-svg-density.c) */
    PpsimSvgDensity *density;
} Svg;

static double
svg_x(const Svg *s, PpsimTime t)
{
    return SVG_LEFT + (double)(t - s->t0) / (double)(s->t1 - s->t0) * s->plot_w;
}

static void
svg_num(GString *out, double v)
{
    ppsim_fmt_fixed(out, v, 2);
}

static void
svg_rect(Svg *s, double x, double y, double w, double h, const char *fill, const char *extra)
{
    g_string_append(s->out, "<rect x=\"");
    svg_num(s->out, x);
    g_string_append(s->out, "\" y=\"");
    svg_num(s->out, y);
    g_string_append(s->out, "\" width=\"");
    svg_num(s->out, MAX(w, 0.3));
    g_string_append(s->out, "\" height=\"");
    svg_num(s->out, h);
    g_string_append_printf(s->out, "\" fill=\"%s\"%s/>\n", fill, extra ? extra : "");
}

static void
svg_text(Svg *s, double x, double y, double size, const char *anchor, const char *fill,
         const char *text)
{
    g_string_append(s->out, "<text x=\"");
    svg_num(s->out, x);
    g_string_append(s->out, "\" y=\"");
    svg_num(s->out, y);
    g_string_append(s->out, "\" font-size=\"");
    svg_num(s->out, size);
    g_string_append_printf(s->out, "\" text-anchor=\"%s\" fill=\"%s\" " SVG_FONT ">", anchor, fill);
    ppsim_fmt_xml_text(s->out, text);
    g_string_append(s->out, "</text>\n");
}

/* Blocks of one lane; microbatch numbers where a block is wide enough. @cpu: draw only the
 * ops that run on a host CPU worker (TRUE) or only the others (FALSE). */
static void
svg_lane(Svg *s, GArray *ops, GArray *timing, double y, double h, gboolean labels, gboolean cpu)
{
    double painted = -1; /* right edge of what this lane has drawn so far */
    for (guint i = 0; i < ops->len; i++) {
        const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
        const PpsimOpTiming *t = &g_array_index(timing, PpsimOpTiming, i);
        if (t->end_ps <= s->t0 || t->start_ps >= s->t1 ||
            ((op->flags & PPSIM_OP_FLAG_CPU) != 0) != cpu)
            continue;
        double x0 = svg_x(s, MAX(t->start_ps, s->t0)), x1 = svg_x(s, MIN(t->end_ps, s->t1));
        /* a sub-pixel block on pixels already painted would be invisible: skip it, so a
         * million-op run stays a drawable file (use a time window to see every op) */
        gboolean tiny = x1 - x0 < 1.0;
        if (tiny && x1 <= painted + 1.0)
            continue;
        painted = MAX(painted, x1);
        g_autofree char *title = g_strdup_printf(
            "><title>%s s=%d mb=%d%s</title></rect", ppsim_op_kind_name(op->kind), op->stage,
            op->microbatch, (op->flags & PPSIM_OP_FLAG_OVERLAP) ? " (F&amp;B pair)" : "");
        /* a <title> child gives a tooltip in browsers; close the element by hand */
        g_string_append(s->out, "<rect x=\"");
        svg_num(s->out, x0);
        g_string_append(s->out, "\" y=\"");
        svg_num(s->out, y);
        g_string_append(s->out, "\" width=\"");
        svg_num(s->out, MAX(x1 - x0, 0.3));
        g_string_append(s->out, "\" height=\"");
        svg_num(s->out, h);
        /* later chunks (stage / p > 0: interleaved and V schedules) lighter, as in the
         * papers' figures */
        gboolean later_chunk = s->p > 0 && op->stage / s->p > 0;
        /* the white outline separates neighbours; on a block of a few pixels it would hide
         * the block */
        g_string_append_printf(s->out, "\" fill=\"%s\"%s%s%s>\n", kind_color[op->kind],
                               later_chunk ? " fill-opacity=\"0.6\"" : "",
                               x1 - x0 >= 2 ? " stroke=\"#ffffff\" stroke-width=\"0.5\"" : "",
                               title);
        /* an F&B pair (schedule.h PPSIM_OP_FLAG_OVERLAP): one black border around both
         * halves, as [DUALPIPE]'s figures mark overlapped chunks */
        if (op->kind == PPSIM_OP_F && (op->flags & PPSIM_OP_FLAG_OVERLAP) && i + 1 < ops->len) {
            const PpsimOpTiming *mate = &g_array_index(timing, PpsimOpTiming, i + 1);
            double px1 = svg_x(s, MIN(MAX(mate->end_ps, s->t0), s->t1));
            g_string_append(s->out, "<rect x=\"");
            svg_num(s->out, x0 + 0.4);
            g_string_append(s->out, "\" y=\"");
            svg_num(s->out, y + 0.4);
            g_string_append(s->out, "\" width=\"");
            svg_num(s->out, MAX(px1 - x0 - 0.8, 0.3));
            g_string_append(s->out, "\" height=\"");
            svg_num(s->out, h - 0.8);
            g_string_append(s->out, "\" fill=\"none\" stroke=\"#000000\" stroke-width=\"0.8\"/>\n");
        }
        double font = MIN(10.0, h - 5);
        if (labels && op->kind != PPSIM_OP_OPT && x1 - x0 >= font * 1.3 && font >= 6) {
            g_autofree char *num = g_strdup_printf("%d", op->microbatch);
            svg_text(s, (x0 + x1) / 2, y + h / 2 + font * 0.35, font, "middle", "#ffffff", num);
        }
    }
}

/* A lane in density mode: the ops added to s->density, each pixel column a stack of its
 * kinds from the bottom of the lane, each as tall as its share of the column's time. */
static void
svg_density_lane(Svg *s, double y, double h)
{
    g_autoptr(GArray) runs = ppsim_svg_density_runs(s->density);
    for (guint i = 0; i < runs->len; i++) {
        const PpsimSvgDensityRun *r = &g_array_index(runs, PpsimSvgDensityRun, i);
        double unit = h / PPSIM_SVG_DENSITY_LEVELS;
        svg_rect(s, SVG_LEFT + r->first, y + h - (r->offset + r->level) * unit,
                 MIN((double)r->n, s->plot_w - r->first), r->level * unit, kind_color[r->kind],
                 NULL);
    }
    ppsim_svg_density_reset(s->density);
}

/* A "nice" tick step (1, 2 or 5 x 10^k ms) giving about @n ticks over @span_ms. */
static double
svg_tick_step(double span_ms, int n)
{
    double raw = span_ms / n, mag = pow(10, floor(log10(raw)));
    double steps[] = {1, 2, 5, 10};
    for (int i = 0; i < 4; i++)
        if (raw <= steps[i] * mag)
            return steps[i] * mag;
    return 10 * mag;
}

static void
svg_axis(Svg *s, double y)
{
    double t0 = (double)s->t0 / PPSIM_PS_PER_MS, t1 = (double)s->t1 / PPSIM_PS_PER_MS;
    double step = svg_tick_step(t1 - t0, MAX(2, (int)(s->plot_w / 110)));
    g_string_append_printf(s->out, "<line x1=\"%d\" y1=\"", SVG_LEFT);
    svg_num(s->out, y);
    g_string_append(s->out, "\" x2=\"");
    svg_num(s->out, SVG_LEFT + s->plot_w);
    g_string_append(s->out, "\" y2=\"");
    svg_num(s->out, y);
    g_string_append(s->out, "\" stroke=\"#333333\"/>\n");
    for (double t = ceil(t0 / step) * step; t <= t1 + step * 1e-9; t += step) {
        double x = svg_x(s, (PpsimTime)llround(t * PPSIM_PS_PER_MS));
        svg_rect(s, x - 0.5, y, 1, 4, "#333333", NULL);
        g_autoptr(GString) label = g_string_new(NULL);
        ppsim_fmt_fixed(label, t, step >= 1 ? 0 : step >= 0.1 ? 1 : 3);
        svg_text(s, x, y + 15, 10, "middle", "#333333", label->str);
    }
    svg_text(s, SVG_LEFT + s->plot_w, y + 28, 10, "end", "#333333", "time (ms)");
    if (s->density)
        svg_text(s, SVG_LEFT, y + 28, 10, "start", "#333333",
                 "one pixel column: a stack of the kinds that ran in it, each as tall as its "
                 "share of the column's time (use --svg-window to see single ops)");
}

static void
svg_legend(Svg *s, const PpsimRunResult *res, double y)
{
    gboolean present[PPSIM_OP_N_KINDS] = {FALSE}, later_chunks = FALSE, pairs = FALSE;
    for (int d = 0; d < res->p; d++)
        for (int list = 0; list < 2; list++) {
            GArray *ops = list == 0 ? res->schedule->compute[d] : res->schedule->copy[d];
            for (guint i = 0; i < ops->len; i++) {
                const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
                present[op->kind] = TRUE;
                later_chunks |= op->stage / res->p > 0;
                pairs |= (op->flags & PPSIM_OP_FLAG_OVERLAP) != 0;
            }
        }
    double x = SVG_LEFT;
    for (int k = 0; k < PPSIM_OP_N_KINDS; k++) {
        if (!present[k])
            continue;
        svg_rect(s, x, y - 9, 12, 12, kind_color[k], NULL);
        svg_text(s, x + 16, y + 1, 11, "start", "#333333", kind_label[k]);
        x += 30 + 7 * strlen(kind_label[k]);
    }
    if (later_chunks && !s->density) {
        /* the shade svg_lane gives a device's second and later chunks */
        svg_rect(s, x, y - 9, 6, 12, "#777777", NULL);
        svg_rect(s, x + 6, y - 9, 6, 12, "#777777", " fill-opacity=\"0.6\"");
        /* two pipelines (DualPipe): the later stages are the reverse direction's */
        const char *shade =
            res->schedule->pipe_stages > 0 ? "lighter: reverse direction" : "lighter: later chunks";
        svg_text(s, x + 16, y + 1, 11, "start", "#333333", shade);
        x += 30 + 7 * strlen(shade);
    }
    if (pairs && !s->density) {
        svg_rect(s, x + 0.5, y - 8.5, 11, 11, "none", " stroke=\"#000000\" stroke-width=\"1\"");
        svg_text(s, x + 16, y + 1, 11, "start", "#333333", "border: F&B pair (overlapped)");
    }
}

static void
svg_memory_value(GString *out, const PpsimRunResult *res, gint64 v)
{
    if (res->mem_scale == 1.0) {
        ppsim_fmt_fixed(out, (double)v / (1024.0 * 1024 * 1024), 1);
        g_string_append(out, " GiB");
    } else {
        ppsim_fmt_fixed(out, (double)v / res->mem_scale, 1);
        g_string_append(out, " units");
    }
}

/* Rows of devices at @y; returns the y below them. */
static double
svg_rows(Svg *s, const PpsimRunResult *res, double y)
{
    s->p = res->p;
    for (int d = 0; d < res->p; d++) {
        g_autofree char *name = g_strdup_printf("device %d", d);
        svg_text(s, SVG_LEFT - 8, y + s->row_h / 2 + 4, MIN(11.0, s->row_h), "end", "#333333",
                 name);
        svg_rect(s, SVG_LEFT, y, s->plot_w, s->row_h, "#f3f3f3", NULL);
        if (s->density) {
            ppsim_svg_density_add(s->density, res->schedule->compute[d], res->compute_timing[d],
                                  FALSE);
            svg_density_lane(s, y, s->row_h);
        } else {
            svg_lane(s, res->schedule->compute[d], res->compute_timing[d], y, s->row_h, TRUE,
                     FALSE);
        }
        y += s->row_h;
        if (s->copy_lane && s->density) {
            ppsim_svg_density_add(s->density, res->schedule->copy[d], res->copy_timing[d], FALSE);
            svg_density_lane(s, y + 1, s->copy_h);
            y += s->copy_h + 1;
        } else if (s->copy_lane) {
            /* the device's copy streams (D2H and H2D) */
            svg_lane(s, res->schedule->copy[d], res->copy_timing[d], y + 1, s->copy_h, FALSE,
                     FALSE);
            y += s->copy_h + 1;
        }
        if (s->cpu_lane) {
            /* its optimizer steps on a host CPU worker */
            svg_text(s, SVG_LEFT - 8, y + 1 + s->copy_h - 1, MIN(8.0, s->copy_h), "end", "#777777",
                     "cpu");
            if (s->density) {
                ppsim_svg_density_add(s->density, res->schedule->compute[d], res->compute_timing[d],
                                      TRUE);
                svg_density_lane(s, y + 1, s->copy_h);
            } else {
                svg_lane(s, res->schedule->compute[d], res->compute_timing[d], y + 1, s->copy_h,
                         FALSE, TRUE);
            }
            y += s->copy_h + 1;
        }
        y += s->gap;
    }
    return y;
}

/* Device @d's total memory (static + activations + buffers) as a step line. */
static void
svg_memory_curve(Svg *s, const PpsimRunResult *res, int d, double y, double h, double lo,
                 double scale)
{
    gint64 cur[PPSIM_MEM_N_CATEGORIES] = {0};
    cur[PPSIM_MEM_STATIC] = res->devices[d].static_memory;
    double base = y + h;
    g_string_append(s->out, "<path fill=\"none\" stroke=\"#4e79a7\" stroke-width=\"1.2\" d=\"M");
    double prev_y = base - ((double)cur[PPSIM_MEM_STATIC] - lo) / scale * h;
    double last_x = -1;
    svg_num(s->out, svg_x(s, s->t0));
    g_string_append_c(s->out, ' ');
    svg_num(s->out, prev_y);
    for (guint i = 0; i < res->mem_samples->len; i++) {
        const PpsimMemSample *m = &g_array_index(res->mem_samples, PpsimMemSample, i);
        if (m->pool != d || m->time_ps > s->t1)
            continue;
        cur[m->category] = m->value;
        /* changes at one instant (a free and an alloc) draw as one step, not a dip */
        gboolean more_now = FALSE;
        for (guint k = i + 1; k < res->mem_samples->len && !more_now; k++) {
            const PpsimMemSample *n = &g_array_index(res->mem_samples, PpsimMemSample, k);
            if (n->time_ps != m->time_ps)
                break;
            more_now = n->pool == d;
        }
        if (more_now)
            continue;
        double v = (double)(cur[0] + cur[1] + cur[2] + cur[3]);
        double x = svg_x(s, MAX(m->time_ps, s->t0)), ny = base - (v - lo) / scale * h;
        /* within a quarter pixel of the last point: invisible, skip (the red dot still marks
         * the exact peak) */
        if (x - last_x < 0.25 && fabs(ny - prev_y) < h / 2)
            continue;
        last_x = x;
        g_string_append(s->out, " H");
        svg_num(s->out, x);
        g_string_append(s->out, " V");
        svg_num(s->out, ny);
        prev_y = ny;
    }
    g_string_append(s->out, " H");
    svg_num(s->out, svg_x(s, s->t1));
    g_string_append(s->out, "\"/>\n");
    const PpsimDeviceResult *dev = &res->devices[d];
    if (dev->peak_time_ps >= s->t0 && dev->peak_time_ps <= s->t1) {
        double px = svg_x(s, dev->peak_time_ps),
               py = base - ((double)dev->peak_memory - lo) / scale * h;
        g_string_append(s->out, "<circle cx=\"");
        svg_num(s->out, px);
        g_string_append(s->out, "\" cy=\"");
        svg_num(s->out, py);
        g_string_append(s->out, "\" r=\"2.5\" fill=\"#e15759\"/>\n");
    }
    (void)prev_y;
}

/* Memory panel: one small chart per device on a shared scale fitted to the data, with peak
 * and limit. */
static double
svg_memory(Svg *s, const PpsimRunResult *res, double y)
{
    if (res->mem_samples == NULL)
        return y;
    double h = res->p <= 8 ? 34 : res->p <= 16 ? 24 : 14;
    /* one scale for every device, fitted to the data: from the smallest static memory (or
     * 0 when that is near the bottom anyway) to the largest peak; the limit joins it when it
     * is near (within 25% above the peak), else the title gives it */
    gint64 top = 0, bottom = G_MAXINT64;
    for (int d = 0; d < res->p; d++) {
        top = MAX(top, res->devices[d].peak_memory);
        bottom = MIN(bottom, res->devices[d].static_memory);
    }
    gboolean limit_in = res->memory_limit > 0 && res->memory_limit <= top + top / 4;
    if (limit_in)
        top = MAX(top, res->memory_limit);
    if (bottom < 0 || bottom < (top - bottom) / 2 || bottom >= top)
        bottom = 0;
    double lo = (double)bottom, scale = MAX((double)(top - bottom), 1.0);
    g_autoptr(GString) head = g_string_new("memory per device (static + activations + "
                                           "buffers; red dot and right: peak; dashed: limit; "
                                           "scale ");
    svg_memory_value(head, res, bottom);
    g_string_append(head, " to ");
    svg_memory_value(head, res, top);
    if (res->memory_limit > 0 && !limit_in) {
        g_string_append(head, "; limit ");
        svg_memory_value(head, res, res->memory_limit);
        g_string_append(head, ", above the scale");
    }
    g_string_append_c(head, ')');
    svg_text(s, SVG_LEFT, y + 12, 11, "start", "#333333", head->str);
    y += 20;
    for (int d = 0; d < res->p; d++) {
        g_autoptr(GString) label = g_string_new(NULL);
        svg_memory_value(label, res, res->devices[d].peak_memory);
        PpsimMemVerdict verdict = res->devices[d].memory_verdict;
        if (verdict == PPSIM_MEM_OOM)
            g_string_append(label, " OOM");
        else if (verdict == PPSIM_MEM_TIGHT)
            g_string_append(label, " tight");
        svg_rect(s, SVG_LEFT, y, s->plot_w, h, "#fafafa", " stroke=\"#dddddd\"");
        if (limit_in) {
            g_string_append_printf(s->out, "<line x1=\"%d\" x2=\"", SVG_LEFT);
            svg_num(s->out, SVG_LEFT + s->plot_w);
            g_string_append(s->out, "\" y1=\"");
            double ly = y + h - ((double)res->memory_limit - lo) / scale * h;
            svg_num(s->out, ly);
            g_string_append(s->out, "\" y2=\"");
            svg_num(s->out, ly);
            g_string_append(s->out, "\" stroke=\"#e15759\" stroke-dasharray=\"4 3\"/>\n");
        }
        svg_memory_curve(s, res, d, y, h, lo, scale);
        g_autofree char *name = g_strdup_printf("device %d", d);
        svg_text(s, SVG_LEFT - 8, y + h / 2 + 4, MIN(11.0, h - 2), "end", "#333333", name);
        /* the peak in the right margin, clear of the curve and the limit line */
        svg_text(s, SVG_LEFT + s->plot_w + 6, y + h / 2 + 3, MIN(9.0, h - 3), "start",
                 verdict == PPSIM_MEM_OOM     ? "#c62828"
                 : verdict == PPSIM_MEM_TIGHT ? "#b26a00"
                                              : "#555555",
                 label->str);
        y += h + 4;
    }
    return y;
}

static void
svg_setup(Svg *s, GString *out, const PpsimSvgOptions *opts, PpsimTime end, int p,
          gboolean copy_lane, gboolean cpu_lane)
{
    int width = opts && opts->width > 0 ? opts->width : 1200;
    s->out = out;
    s->t0 = opts ? MAX(opts->t0_ps, 0) : 0;
    s->t1 = opts && opts->t1_ps > s->t0 ? opts->t1_ps : 0;
    /* the whole run, or a window cut at its end; a window past the end stays (the title
     * says it is empty) */
    if (s->t1 == 0 || (s->t0 < end && s->t1 > end))
        s->t1 = end;
    s->t1 = MAX(s->t1, s->t0 + 1);
    s->density = NULL;
    s->plot_w = width - SVG_LEFT - SVG_RIGHT - 60;
    s->row_h = p <= 8 ? 22 : p <= 16 ? 16 : MAX(8.0, 320.0 / p);
    s->copy_lane = copy_lane;
    s->cpu_lane = cpu_lane;
    s->copy_h = copy_lane || cpu_lane ? MAX(4.0, s->row_h / 3) : 0;
    s->gap = p <= 16 ? 4 : 2;
}

static gboolean
svg_has_copy(const PpsimRunResult *res)
{
    for (int d = 0; d < res->p; d++)
        if (res->schedule->copy[d]->len > 0)
            return TRUE;
    return FALSE;
}

static gboolean
svg_has_cpu(const PpsimRunResult *res)
{
    for (int d = 0; d < res->p; d++) {
        const GArray *ops = res->schedule->compute[d];
        for (guint i = 0; i < ops->len; i++)
            if (g_array_index(ops, PpsimOp, i).flags & PPSIM_OP_FLAG_CPU)
                return TRUE;
    }
    return FALSE;
}

static void
svg_title(Svg *s, const PpsimRunResult *res, double y, gboolean with_scenario)
{
    g_autoptr(GString) t = g_string_new(NULL);
    if (with_scenario)
        g_string_append_printf(t, "%s: ", res->scenario ? res->scenario : "");
    g_string_append_printf(t, "%s (p=%d, v=%d, m=%d), makespan ", res->label, res->p, res->v,
                           res->m);
    ppsim_fmt_fixed(t, (double)res->makespan_ps / PPSIM_PS_PER_MS, 3);
    g_string_append(t, " ms, bubble ");
    ppsim_fmt_fixed(t, res->bubble_ratio, 3);
    if (s->t0 > 0 && s->t0 >= res->makespan_ps)
        g_string_append(t, "; nothing in the window, which starts after the end");
    svg_text(s, SVG_LEFT, y, 13, "start", "#111111", t->str);
}

static void
svg_open(GString *out, int width, double height)
{
    g_string_append_printf(out,
                           "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                           "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
                           "height=\"%d\" viewBox=\"0 0 %d %d\">\n"
                           "<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n",
                           width, (int)ceil(height), width, (int)ceil(height));
}

void
ppsim_report_svg(GString *out, const PpsimRunResult *res, const PpsimSvgOptions *opts)
{
    Svg s;
    g_autoptr(GString) body = g_string_new(NULL);
    svg_setup(&s, body, opts, res->makespan_ps, res->p, svg_has_copy(res), svg_has_cpu(res));
    if (ppsim_svg_density_wanted(res, s.t0, s.t1, s.plot_w))
        s.density = ppsim_svg_density_new(s.t0, s.t1, s.plot_w);
    svg_title(&s, res, 22, TRUE);
    svg_legend(&s, res, 42);
    double y = svg_rows(&s, res, 56);
    svg_axis(&s, y + 2);
    y = svg_memory(&s, res, y + 40);
    y = ppsim_report_svg_bubbles(body, res, SVG_LEFT, y + 10, s.plot_w);
    int width = (int)(s.plot_w + SVG_LEFT + SVG_RIGHT + 60);
    svg_open(out, width, y + 10);
    g_string_append_len(out, body->str, body->len);
    g_string_append(out, "</svg>\n");
    ppsim_svg_density_free(s.density);
}

void
ppsim_report_svg_compare(GString *out, const GPtrArray *results, const PpsimSvgOptions *opts)
{
    PpsimTime end = 1;
    int max_p = 1;
    gboolean copy = FALSE, cpu = FALSE;
    for (guint i = 0; i < results->len; i++) {
        const PpsimRunResult *res = g_ptr_array_index(results, i);
        end = MAX(end, res->makespan_ps);
        max_p = MAX(max_p, res->p);
        copy |= svg_has_copy(res);
        cpu |= svg_has_cpu(res);
    }
    Svg s;
    g_autoptr(GString) body = g_string_new(NULL);
    svg_setup(&s, body, opts, end, max_p, copy, cpu);
    for (guint i = 0; i < results->len && s.density == NULL; i++)
        if (ppsim_svg_density_wanted(g_ptr_array_index(results, i), s.t0, s.t1, s.plot_w))
            s.density = ppsim_svg_density_new(s.t0, s.t1, s.plot_w);
    double y = 10;
    for (guint i = 0; i < results->len; i++) {
        const PpsimRunResult *res = g_ptr_array_index(results, i);
        svg_title(&s, res, y + 14, i == 0);
        svg_legend(&s, res, y + 34);
        y = svg_rows(&s, res, y + 46) + 8;
    }
    svg_axis(&s, y);
    int width = (int)(s.plot_w + SVG_LEFT + SVG_RIGHT + 60);
    svg_open(out, width, y + 36);
    g_string_append_len(out, body->str, body->len);
    g_string_append(out, "</svg>\n");
    ppsim_svg_density_free(s.density);
}
