/* sweep-plot.c: a sweep's rows as SVG plots: the Pareto front (of a sweep or a search) and
 * the bubble ratio against the microbatch count; see sweep.h. */
#include "sweep/sweep-summary-internal.h"
#include "util/fmt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- SVG ------------------------------------------------------------------------------------ */

#define PLOT_W 960
#define PLOT_H 440
#define PLOT_L 80
#define PLOT_R 440
#define PLOT_T 30
#define PLOT_B 60

/* Ten well-separated colours (the Tableau 10 set); curves beyond ten repeat them with a
 * dash pattern (dashes[]), so 30 curves stay distinct. */
static const char *const palette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
static const char *const dashes[] = {"", "6,3", "2,2"};

typedef struct {
    double x0, x1, y0, y1;
} Box;

static double
px(const Box *b, double x)
{
    return PLOT_L +
           (b->x1 > b->x0 ? (x - b->x0) / (b->x1 - b->x0) : 0.5) * (PLOT_W - PLOT_L - PLOT_R);
}

static double
py(const Box *b, double y)
{
    return PLOT_H - PLOT_B -
           (b->y1 > b->y0 ? (y - b->y0) / (b->y1 - b->y0) : 0.5) * (PLOT_H - PLOT_T - PLOT_B);
}

static void
num(GString *out, double v)
{
    ppsim_fmt_fixed(out, v, 1);
}

/* A "nice" tick step (1, 2 or 5 x 10^k) giving about @target ticks over @range. */
static double
nice_step(double range, int target)
{
    if (!(range > 0))
        return 1;
    double raw = range / target, mag = pow(10, floor(log10(raw))), f = raw / mag;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

/* Widens [*lo, *hi] to whole ticks; the low end goes to 0 only when the data reach within
 * a third of the span from it (else 0 would squash them into a strip). */
static void
nice_range(double *lo, double *hi, gboolean allow_zero)
{
    if (!(*hi > *lo)) {
        double pad = *hi != 0 ? fabs(*hi) * 0.1 : 1;
        *lo -= pad;
        *hi += pad;
    }
    if (allow_zero && *lo > 0 && *lo < (*hi - *lo) / 2)
        *lo = 0;
    double step = nice_step(*hi - *lo, 5);
    *lo = floor(*lo / step) * step;
    *hi = ceil(*hi / step) * step;
}

/* Decimals that show @step exactly (up to 6). */
static int
step_decimals(double step)
{
    int d = 0;
    while (d < 6 && fabs(step * pow(10, d) - round(step * pow(10, d))) > 1e-6)
        d++;
    return d;
}

/* Frame, 5 ticks per axis, axis titles. */
static void
plot_frame(GString *out, const Box *b, const char *title, const char *xt, const char *yt)
{
    g_string_append_printf(out,
                           "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                           "font-family=\"sans-serif\" font-size=\"12\">\n"
                           "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
                           "<text x=\"%d\" y=\"18\" font-size=\"14\">",
                           PLOT_W, PLOT_H, PLOT_L);
    ppsim_fmt_xml_text(out, title);
    g_string_append(out, "</text>\n");
    /* ticks at whole multiples of a nice step (the box is widened to them by nice_range) */
    double xs = nice_step(b->x1 - b->x0, 5), ys = nice_step(b->y1 - b->y0, 5);
    for (double x = ceil(b->x0 / xs - 1e-9) * xs; x <= b->x1 + xs * 1e-9; x += xs) {
        g_string_append(out, "<text text-anchor=\"middle\" x=\"");
        num(out, px(b, x));
        g_string_append_printf(out, "\" y=\"%d\">", PLOT_H - PLOT_B + 16);
        ppsim_fmt_fixed(out, fabs(x) < xs * 1e-9 ? 0 : x, step_decimals(xs));
        g_string_append(out, "</text>\n<line stroke=\"#eee\" x1=\"");
        num(out, px(b, x));
        g_string_append(out, "\" x2=\"");
        num(out, px(b, x));
        g_string_append_printf(out, "\" y1=\"%d\" y2=\"%d\"/>\n", PLOT_T, PLOT_H - PLOT_B);
    }
    for (double y = ceil(b->y0 / ys - 1e-9) * ys; y <= b->y1 + ys * 1e-9; y += ys) {
        g_string_append(out, "<text text-anchor=\"end\" x=\"");
        g_string_append_printf(out, "%d\" y=\"", PLOT_L - 6);
        num(out, py(b, y) + 4);
        g_string_append(out, "\">");
        ppsim_fmt_fixed(out, fabs(y) < ys * 1e-9 ? 0 : y, step_decimals(ys));
        g_string_append(out, "</text>\n<line stroke=\"#ddd\" x1=\"");
        g_string_append_printf(out, "%d\" x2=\"%d\" y1=\"", PLOT_L, PLOT_W - PLOT_R);
        num(out, py(b, y));
        g_string_append(out, "\" y2=\"");
        num(out, py(b, y));
        g_string_append(out, "\"/>\n");
    }
    g_string_append_printf(out,
                           "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
                           "stroke=\"black\"/>\n<text text-anchor=\"middle\" x=\"%d\" y=\"%d\">",
                           PLOT_L, PLOT_T, PLOT_W - PLOT_L - PLOT_R, PLOT_H - PLOT_T - PLOT_B,
                           (PLOT_L + PLOT_W - PLOT_R) / 2, PLOT_H - 20);
    ppsim_fmt_xml_text(out, xt);
    g_string_append_printf(out,
                           "</text>\n<text text-anchor=\"middle\" transform=\"translate(18,%d) "
                           "rotate(-90)\">",
                           (PLOT_T + PLOT_H - PLOT_B) / 2);
    ppsim_fmt_xml_text(out, yt);
    g_string_append(out, "</text>\n");
}

static void
plot_legend(GString *out, int i, const char *color, const char *label)
{
    int y = PLOT_T + 10 + 16 * i;
    g_string_append_printf(out,
                           "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                           "<text x=\"%d\" y=\"%d\">",
                           PLOT_W - PLOT_R + 12, y - 9, color, PLOT_W - PLOT_R + 26, y);
    ppsim_fmt_xml_text(out, label);
    g_string_append(out, "</text>\n");
}

/* A dot of series @k at (@x, @y): a circle for the first ten colours, then a square, then a
 * diamond, so that series sharing a colour stay apart. */
static void
plot_marker(GString *out, guint k, double x, double y, double r, const char *extra)
{
    const char *color = palette[k % G_N_ELEMENTS(palette)];
    guint shape = (k / G_N_ELEMENTS(palette)) % 3;
    if (shape == 0) {
        g_string_append(out, "<circle cx=\"");
        num(out, x);
        g_string_append(out, "\" cy=\"");
        num(out, y);
        g_string_append_printf(out, "\" r=\"%g\"", r);
    } else {
        g_string_append(out, "<rect x=\"");
        num(out, x - r);
        g_string_append(out, "\" y=\"");
        num(out, y - r);
        g_string_append_printf(out, "\" width=\"%g\" height=\"%g\"", 2 * r, 2 * r);
        if (shape == 2) {
            g_string_append(out, " transform=\"rotate(45 ");
            num(out, x);
            g_string_append_c(out, ' ');
            num(out, y);
            g_string_append(out, ")\"");
        }
    }
    g_string_append_printf(out, " fill=\"%s\"%s/>\n", color, extra);
}

/* A legend entry with series @k's marker. */
static void
plot_legend_marker(GString *out, int i, guint k, const char *label)
{
    int y = PLOT_T + 10 + 16 * i;
    plot_marker(out, k, PLOT_W - PLOT_R + 17, y - 4, 5, "");
    g_string_append_printf(out, "<text x=\"%d\" y=\"%d\">", PLOT_W - PLOT_R + 26, y);
    ppsim_fmt_xml_text(out, label);
    g_string_append(out, "</text>\n");
}

/* A legend entry drawn as a short line (with the curve's dash pattern). */
static void
plot_legend_line(GString *out, int i, const char *color, const char *dash, const char *label)
{
    int y = PLOT_T + 10 + 16 * i;
    g_string_append_printf(out,
                           "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"%s\" "
                           "stroke-width=\"2\"%s%s%s/><text x=\"%d\" y=\"%d\">",
                           PLOT_W - PLOT_R + 8, PLOT_W - PLOT_R + 30, y - 4, y - 4, color,
                           *dash ? " stroke-dasharray=\"" : "", dash, *dash ? "\"" : "",
                           PLOT_W - PLOT_R + 36, y);
    ppsim_fmt_xml_text(out, label);
    g_string_append(out, "</text>\n");
}

static void
box_grow(Box *b, double x, double y)
{
    b->x0 = MIN(b->x0, x);
    b->x1 = MAX(b->x1, x);
    b->y0 = MIN(b->y0, y);
    b->y1 = MAX(b->y1, y);
}

/* Short "zb-v tp=4 pp=8 mbs=1" label of a row: the schedule and each axis value that varies
 * between @rows, named by the key path's last part. */
static char *
row_label(const PpsimSweepRow *r, char **axis_names, int n_axes, const GPtrArray *rows)
{
    GString *t = g_string_new(NULL);
    for (int a = 0; a < n_axes; a++) {
        if (r->labels[a] == NULL || r->labels[a][0] == '\0' ||
            strcmp(axis_names[a], "training.pp") == 0) /* a search shows parallel.pp */
            continue;
        gboolean varies = FALSE;
        for (guint i = 0; i < rows->len && !varies; i++) {
            const PpsimSweepRow *q = g_ptr_array_index(rows, i);
            varies = q->labels[a] != NULL && strcmp(q->labels[a], r->labels[a]) != 0;
        }
        if (!varies)
            continue;
        const char *dot = strrchr(axis_names[a], '.');
        const char *name = dot ? dot + 1 : axis_names[a];
        if (strcmp(name, "microbatch_size") == 0)
            name = "mbs";
        else if (strcmp(name, "microbatches") == 0)
            name = "m";
        else if (strcmp(name, "chunks") == 0)
            name = "v";
        else if (strcmp(name, "recompute") == 0)
            name = "rc";
        g_string_append_printf(t, " %s=%s", name, r->labels[a]);
    }
    g_string_prepend(t, r->schedule);
    return g_string_free(t, FALSE);
}

/* A dot per fitting row coloured by schedule, the front as a line with each point labelled,
 * and @limit (> 0) as a vertical line. @by_tput: y is tokens/s (higher is better), else
 * makespan. */
static void
svg_front(GString *out, const GPtrArray *rows, char **axis_names, int n_axes, gboolean by_tput,
          double limit, const char *title)
{
    gboolean bytes = ppsim_sweep_rows_in_bytes(rows);
    double scale = bytes ? 1024.0 * 1024.0 * 1024.0 : 1.0;
    Box b = {INFINITY, -INFINITY, INFINITY, -INFINITY};
    g_autoptr(GPtrArray) names = g_ptr_array_new();
    for (guint i = 0; i < rows->len; i++) {
        const PpsimSweepRow *r = g_ptr_array_index(rows, i);
        if (!ppsim_sweep_row_fits(r))
            continue;
        box_grow(&b, r->peak_memory / scale, by_tput ? r->tokens_per_s : r->makespan_ms);
        if (!g_ptr_array_find_with_equal_func(names, r->schedule, g_str_equal, NULL))
            g_ptr_array_add(names, r->schedule);
    }
    if (names->len == 0)
        b = (Box){0, 1, 0, 1};
    /* the limit as a line inside the frame, unless it is far beyond the data (it would
     * squash them to the left): then the title names it */
    gboolean limit_line = limit > 0 && (names->len == 0 || limit / scale <= 1.5 * b.x1);
    if (limit_line)
        b.x1 = MAX(b.x1, limit / scale * 1.04);
    nice_range(&b.x0, &b.x1, TRUE);
    nice_range(&b.y0, &b.y1, TRUE);
    plot_frame(out, &b, title, bytes ? "peak memory per GPU (GiB)" : "peak memory (units)",
               by_tput ? "tokens/s" : "makespan (ms)");
    if (limit > 0 && !limit_line) {
        g_string_append_printf(out,
                               "<text fill=\"#c00\" text-anchor=\"end\" x=\"%d\" y=\"%d\">"
                               "memory limit ",
                               PLOT_W - PLOT_R, PLOT_T + 14);
        ppsim_fmt_fixed(out, limit / scale, bytes ? 0 : 1);
        g_string_append_printf(out, "%s, off the chart</text>\n", bytes ? " GiB" : "");
    }
    if (limit_line) {
        g_string_append(out, "<line stroke=\"#c00\" stroke-dasharray=\"6,4\" x1=\"");
        num(out, px(&b, limit / scale));
        g_string_append(out, "\" x2=\"");
        num(out, px(&b, limit / scale));
        g_string_append_printf(out, "\" y1=\"%d\" y2=\"%d\"/>\n", PLOT_T, PLOT_H - PLOT_B);
        g_string_append(out, "<text fill=\"#c00\" text-anchor=\"end\" x=\"");
        num(out, px(&b, limit / scale) - 4);
        g_string_append_printf(out, "\" y=\"%d\">memory limit ", PLOT_T + 14);
        ppsim_fmt_fixed(out, limit / scale, bytes ? 0 : 1);
        g_string_append_printf(out, "%s</text>\n", bytes ? " GiB" : "");
    }
    for (guint i = 0; i < rows->len; i++) {
        const PpsimSweepRow *r = g_ptr_array_index(rows, i);
        guint k = 0;
        if (!ppsim_sweep_row_fits(r) ||
            !g_ptr_array_find_with_equal_func(names, r->schedule, g_str_equal, &k))
            continue;
        plot_marker(out, k, px(&b, r->peak_memory / scale),
                    py(&b, by_tput ? r->tokens_per_s : r->makespan_ms), 3, " fill-opacity=\"0.5\"");
    }
    g_autoptr(GPtrArray) front = ppsim_sweep_pareto_front(rows, by_tput);
    g_string_append(out, "<polyline fill=\"none\" stroke=\"black\" stroke-width=\"1.5\" points=\"");
    for (guint i = 0; i < front->len; i++) {
        const PpsimSweepRow *r = g_ptr_array_index(front, i);
        num(out, px(&b, r->peak_memory / scale));
        g_string_append_c(out, ',');
        num(out, py(&b, by_tput ? r->tokens_per_s : r->makespan_ms));
        g_string_append_c(out, ' ');
    }
    g_string_append(out, "\"/>\n");
    /* the front's points numbered (at most 8, evenly picked), their configurations in a
     * key under the legend */
    guint every = front->len > 8 ? (front->len + 7) / 8 : 1, shown = 0;
    guint n_legend = MIN(names->len, 20) + (names->len > 20) + 1;
    int key_y = PLOT_T + 16 * (int)n_legend + 22;
    g_string_append_printf(out,
                           "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">Pareto front:</text>\n",
                           PLOT_W - PLOT_R + 12, key_y);
    for (guint i = 0; i < front->len; i++) {
        if (i % every != 0)
            continue;
        const PpsimSweepRow *r = g_ptr_array_index(front, i);
        g_autofree char *label = row_label(r, axis_names, n_axes, rows);
        double x = px(&b, r->peak_memory / scale),
               y = py(&b, by_tput ? r->tokens_per_s : r->makespan_ms);
        shown++;
        g_string_append(out, "<circle r=\"4\" fill=\"none\" stroke=\"black\" cx=\"");
        num(out, x);
        g_string_append(out, "\" cy=\"");
        num(out, y);
        g_string_append(out,
                        "\"/><text font-size=\"11\" font-weight=\"bold\" text-anchor=\"end\" x=\"");
        num(out, x - 5);
        g_string_append(out, "\" y=\"");
        num(out, y - 5);
        g_string_append_printf(out, "\">%u</text>\n", shown);
        g_string_append_printf(out, "<text font-size=\"10\" x=\"%d\" y=\"%d\">%u: ",
                               PLOT_W - PLOT_R + 12, key_y + 13 * (int)shown, shown);
        ppsim_fmt_xml_text(out, label);
        g_string_append(out, "</text>\n");
    }
    for (guint k = 0; k < names->len && k < 20; k++)
        plot_legend_marker(out, (int)k, k, g_ptr_array_index(names, k));
    if (names->len > 20) {
        g_autofree char *more = g_strdup_printf("(+%u more schedules)", names->len - 20);
        plot_legend(out, 20, "white", more);
    }
    plot_legend(out, (int)MIN(names->len, 21), "black", "Pareto front");
    g_string_append(out, "</svg>\n");
}

void
ppsim_sweep_svg_pareto(GString *out, const GPtrArray *rows, char **axis_names, int n_axes,
                       double limit)
{
    gboolean by_tput = ppsim_sweep_rows_by_throughput(rows);
    svg_front(out, rows, axis_names, n_axes, by_tput, limit,
              by_tput ? "tokens/s against peak memory (rows that fit)"
                      : "makespan against peak memory (rows that fit)");
}

void
ppsim_sweep_svg_search(GString *out, const GPtrArray *rows, char **axis_names, int n_axes,
                       double limit)
{
    svg_front(out, rows, axis_names, n_axes, TRUE, limit,
              "layouts: tokens/s against peak memory (each with the first memory plan that "
              "fits)");
}

/* (x, y) pairs by x, then y. */
static int
cmp_x(const void *pa, const void *pb)
{
    const double *a = pa, *b = pb;
    if (a[0] != b[0])
        return a[0] < b[0] ? -1 : 1;
    return (a[1] > b[1]) - (a[1] < b[1]);
}

/* Curves are keyed by the schedule and every axis value but m's. */
static char *
curve_key(const PpsimSweepRow *r, char **axis_names, int n_axes, int m_axis)
{
    GString *k = g_string_new(r->schedule);
    for (int a = 0; a < n_axes; a++)
        if (a != m_axis)
            g_string_append_printf(k, " %s=%s", axis_names[a], r->labels[a]);
    return g_string_free(k, FALSE);
}

void
ppsim_sweep_svg_bubble(GString *out, const GPtrArray *rows, char **axis_names, int n_axes,
                       int m_axis)
{
    g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func(g_free);
    g_autoptr(GPtrArray) curves = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
    Box b = {INFINITY, -INFINITY, 0, 0};
    for (guint i = 0; i < rows->len; i++) {
        const PpsimSweepRow *r = g_ptr_array_index(rows, i);
        if (!r->has_metrics)
            continue;
        double m = g_ascii_strtod(r->labels[m_axis], NULL);
        g_autofree char *key = curve_key(r, axis_names, n_axes, m_axis);
        guint k = 0;
        if (!g_ptr_array_find_with_equal_func(keys, key, g_str_equal, &k)) {
            g_ptr_array_add(keys, g_steal_pointer(&key));
            g_ptr_array_add(curves, g_array_new(FALSE, FALSE, sizeof(double)));
            k = keys->len - 1;
        }
        double xy[2] = {m, r->bubble_ratio};
        g_array_append_vals(g_ptr_array_index(curves, k), xy, 2);
        box_grow(&b, m, r->bubble_ratio);
    }
    if (keys->len == 0)
        b = (Box){0, 1, 0, 1};
    b.y1 = MAX(b.y1, 0.05);
    nice_range(&b.x0, &b.x1, FALSE);
    nice_range(&b.y0, &b.y1, TRUE);
    g_autofree char *xt = g_strdup_printf("%s", axis_names[m_axis]);
    plot_frame(out, &b, "bubble ratio against the number of microbatches", xt, "bubble ratio");
    for (guint k = 0; k < curves->len; k++) {
        GArray *c = g_ptr_array_index(curves, k);
        qsort(c->data, c->len / 2, 2 * sizeof(double), cmp_x);
        const char *color = palette[k % G_N_ELEMENTS(palette)];
        const char *dash = dashes[(k / G_N_ELEMENTS(palette)) % G_N_ELEMENTS(dashes)];
        g_string_append_printf(out,
                               "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" "
                               "%s%s%spoints=\"",
                               color, *dash ? "stroke-dasharray=\"" : "", dash, *dash ? "\" " : "");
        for (guint i = 0; i + 1 < c->len; i += 2) {
            num(out, px(&b, g_array_index(c, double, i)));
            g_string_append_c(out, ',');
            num(out, py(&b, g_array_index(c, double, i + 1)));
            g_string_append_c(out, ' ');
        }
        g_string_append(out, "\"/>\n");
        if (k < 20)
            plot_legend_line(out, (int)k, color, dash, g_ptr_array_index(keys, k));
    }
    if (curves->len > 20) {
        g_autofree char *more = g_strdup_printf("(+%u more curves)", curves->len - 20);
        plot_legend(out, 20, "white", more);
    }
    g_string_append(out, "</svg>\n");
}
