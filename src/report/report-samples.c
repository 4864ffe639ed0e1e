/* report-samples.c: what `ppsim run --samples N` adds to the reports (scenarios/README.md
 * "Variability"): the JSON `makespan_percentiles`, a text line per schedule, and the makespan CDF
 * chart. */
#include "report/report.h"
#include "util/fmt.h"

#include <math.h>

static void
fmt_ms_double(GString *out, double ps)
{
    ppsim_fmt_fixed(out, ps / PPSIM_PS_PER_MS, 6);
}

void
ppsim_report_json_samples(GString *out, const PpsimSampleSummary *s, PpsimTime deterministic_ps)
{
    g_string_append(out, ",\"makespan_percentiles\":{\"mean\":");
    fmt_ms_double(out, s->mean_ps);
    g_string_append(out, ",\"p50\":");
    ppsim_fmt_ms(out, s->p50_ps);
    g_string_append(out, ",\"p90\":");
    ppsim_fmt_ms(out, s->p90_ps);
    g_string_append(out, ",\"p99\":");
    ppsim_fmt_ms(out, s->p99_ps);
    g_string_append(out, ",\"stddev\":");
    fmt_ms_double(out, s->stddev_ps);
    g_string_append(out, ",\"min\":");
    ppsim_fmt_ms(out, s->sorted_ps[0]);
    g_string_append(out, ",\"max\":");
    ppsim_fmt_ms(out, s->sorted_ps[s->n - 1]);
    g_string_append(out, ",\"deterministic\":");
    ppsim_fmt_ms(out, deterministic_ps);
    g_string_append_printf(out,
                           "},\"samples\":{\"n\":%d,\"seed\":%" G_GUINT64_FORMAT
                           ",\"dp\":%d,\"dp_exact\":%d,\"dp_shift\":",
                           s->n, s->seed, s->dp, s->dp_exact);
    ppsim_fmt_ms(out, s->dp_shift_ps);
    g_string_append(out, ",\"dp_scale\":");
    ppsim_fmt_double(out, s->dp_scale);
    g_string_append_printf(out, ",\"transfers\":\"%s\"}",
                           s->frozen_transfers ? "frozen" : "latency");
}

/* "+1.23%" of @x over @base. */
static void
fmt_over(GString *out, double x, double base)
{
    double pct = base > 0 ? 100.0 * (x - base) / base : 0;
    g_string_append_c(out, pct < 0 ? '-' : '+');
    ppsim_fmt_fixed(out, fabs(pct), 2);
    g_string_append_c(out, '%');
}

void
ppsim_report_text_samples(GString *out, const GPtrArray *results)
{
    gboolean header = FALSE;
    for (guint i = 0; i < results->len; i++) {
        const PpsimRunResult *res = g_ptr_array_index(results, i);
        const PpsimSampleSummary *s = res->samples;
        if (s == NULL)
            continue;
        if (!header) {
            g_string_append_printf(out,
                                   "\nmakespan over %d samples (seed %" G_GUINT64_FORMAT
                                   "), ms; p99 over the deterministic makespan; devices on the "
                                   "critical path in more than half of the samples\n",
                                   s->n, s->seed);
            header = TRUE;
        }
        g_string_append_printf(out, "%-10s det ", res->label);
        ppsim_fmt_fixed(out, (double)res->makespan_ps / PPSIM_PS_PER_MS, 3);
        g_string_append(out, "  mean ");
        ppsim_fmt_fixed(out, s->mean_ps / PPSIM_PS_PER_MS, 3);
        const char *names[] = {"p50", "p90", "p99"};
        PpsimTime q[] = {s->p50_ps, s->p90_ps, s->p99_ps};
        for (int k = 0; k < 3; k++) {
            g_string_append_printf(out, "  %s ", names[k]);
            ppsim_fmt_fixed(out, (double)q[k] / PPSIM_PS_PER_MS, 3);
        }
        g_string_append(out, " (");
        fmt_over(out, (double)s->p99_ps, (double)res->makespan_ps);
        g_string_append(out, ")");
        if (s->dp > 1)
            g_string_append_printf(out, "  dp %d%s", s->dp,
                                   s->dp > s->dp_exact ? " (extrapolated from dp_exact)" : "");
        g_string_append(out, "  critical:");
        int shown = 0;
        for (int d = 0; d < s->p; d++)
            if (s->critical_share[d] > 0.5) {
                g_string_append_printf(out, " d%d", d);
                shown++;
            }
        if (shown == 0)
            g_string_append(out, " none above half");
        g_string_append_c(out, '\n');
    }
}

/* ---- the CDF chart ------------------------------------------------------------------------ */

static const char *const cdf_colors[] = {"#4e79a7", "#e15759", "#59a14f", "#f28e2b", "#b07aa1",
                                         "#76b7b2", "#edc948", "#ff9da7", "#9c755f", "#bab0ac"};

#define CDF_W 840.0
#define CDF_H 420.0
#define CDF_LEFT 70.0
#define CDF_TOP 40.0
#define CDF_PLOT_W 460.0
#define CDF_PLOT_H 320.0

static void
svg_num(GString *out, double v)
{
    ppsim_fmt_fixed(out, v, 2);
}

/* Appends ` name="v"` (locale-independent: the CLI sets the user's locale). */
static void
attr(GString *out, const char *name, double v)
{
    g_string_append_printf(out, " %s=\"", name);
    svg_num(out, v);
    g_string_append_c(out, '"');
}

static void
line(GString *out, double x1, double y1, double x2, double y2, const char *style)
{
    g_string_append(out, "<line");
    attr(out, "x1", x1);
    attr(out, "y1", y1);
    attr(out, "x2", x2);
    attr(out, "y2", y2);
    g_string_append_printf(out, " %s/>\n", style);
}

/* Opens a <text> element at (@x, @y); the caller appends the text and "</text>\n". */
static void
text_at(GString *out, double x, double y, const char *style)
{
    g_string_append(out, "<text");
    attr(out, "x", x);
    attr(out, "y", y);
    g_string_append_printf(out, " %s>", style);
}

/* A "nice" tick step of about (hi - lo) / 6. */
static double
tick_step(double lo, double hi)
{
    double raw = (hi - lo) / 6, mag = pow(10, floor(log10(raw)));
    double f = raw / mag;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

static void
cdf_axes(GString *out, double lo, double hi)
{
    g_string_append(out, "<rect");
    attr(out, "x", CDF_LEFT);
    attr(out, "y", CDF_TOP);
    attr(out, "width", CDF_PLOT_W);
    attr(out, "height", CDF_PLOT_H);
    g_string_append(out, " fill=\"none\" stroke=\"#333333\"/>\n");
    double step = tick_step(lo, hi);
    int decimals = step < 1 ? (step < 0.1 ? 3 : (step < 0.5 ? 2 : 1)) : 0;
    for (double t = ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) {
        double x = CDF_LEFT + (t - lo) / (hi - lo) * CDF_PLOT_W;
        line(out, x, CDF_TOP, x, CDF_TOP + CDF_PLOT_H, "stroke=\"#dddddd\"");
        text_at(out, x, CDF_TOP + CDF_PLOT_H + 16, "font-size=\"11\" text-anchor=\"middle\"");
        ppsim_fmt_fixed(out, t, decimals);
        g_string_append(out, "</text>\n");
    }
    for (int k = 0; k <= 4; k++) {
        double y = CDF_TOP + CDF_PLOT_H * (1 - k / 4.0);
        line(out, CDF_LEFT, y, CDF_LEFT + CDF_PLOT_W, y, "stroke=\"#dddddd\"");
        text_at(out, CDF_LEFT - 6, y + 4, "font-size=\"11\" text-anchor=\"end\"");
        ppsim_fmt_fixed(out, k / 4.0, 2);
        g_string_append(out, "</text>\n");
    }
    text_at(out, CDF_LEFT + CDF_PLOT_W / 2, CDF_TOP + CDF_PLOT_H + 36,
            "font-size=\"12\" text-anchor=\"middle\"");
    g_string_append(out, "makespan (ms)</text>\n");
    g_string_append_printf(out,
                           "<text x=\"18\" y=\"%d\" font-size=\"12\" text-anchor=\"middle\" "
                           "transform=\"rotate(-90 18 %d)\">share of samples at or below</text>\n",
                           (int)(CDF_TOP + CDF_PLOT_H / 2), (int)(CDF_TOP + CDF_PLOT_H / 2));
}

/* One schedule's empirical CDF as a step line, its deterministic makespan as a dashed
 * vertical line, and its legend entry. */
static void
cdf_curve(GString *out, const PpsimRunResult *res, int k, double lo, double hi)
{
    const PpsimSampleSummary *s = res->samples;
    const char *color = cdf_colors[k % G_N_ELEMENTS(cdf_colors)];
    double span = hi - lo;
#define XOF(ps) (CDF_LEFT + ((double)(ps) / PPSIM_PS_PER_MS - lo) / span * CDF_PLOT_W)
    g_string_append_printf(out, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\" d=\"M",
                           color);
    svg_num(out, CDF_LEFT);
    g_string_append_c(out, ' ');
    svg_num(out, CDF_TOP + CDF_PLOT_H);
    /* at most ~2 points per pixel column: the step at each distinct value */
    for (int i = 0; i < s->n; i++) {
        if (i + 1 < s->n && s->sorted_ps[i + 1] == s->sorted_ps[i])
            continue;
        double x = XOF(s->sorted_ps[i]);
        double y0 = CDF_TOP + CDF_PLOT_H * (1 - (double)i / s->n);
        double y1 = CDF_TOP + CDF_PLOT_H * (1 - (double)(i + 1) / s->n);
        g_string_append(out, " L");
        svg_num(out, x);
        g_string_append_c(out, ' ');
        svg_num(out, y0);
        g_string_append(out, " L");
        svg_num(out, x);
        g_string_append_c(out, ' ');
        svg_num(out, y1);
    }
    g_string_append(out, " L");
    svg_num(out, CDF_LEFT + CDF_PLOT_W);
    g_string_append_c(out, ' ');
    svg_num(out, CDF_TOP);
    g_string_append(out, "\"/>\n");
    double xd = XOF(res->makespan_ps);
    g_autofree char *dash = g_strdup_printf("stroke=\"%s\" stroke-dasharray=\"4 3\"", color);
    line(out, xd, CDF_TOP, xd, CDF_TOP + CDF_PLOT_H, dash);
#undef XOF
    double ly = CDF_TOP + 10 + 36 * k, lx = CDF_LEFT + CDF_PLOT_W + 20;
    g_autofree char *solid = g_strdup_printf("stroke=\"%s\" stroke-width=\"2\"", color);
    line(out, lx, ly, lx + 24, ly, solid);
    text_at(out, lx + 30, ly + 4, "font-size=\"12\"");
    ppsim_fmt_xml_text(out, res->label);
    g_string_append(out, "</text>\n");
    text_at(out, lx + 30, ly + 18, "font-size=\"10\" fill=\"#555555\"");
    g_string_append(out, "p50 ");
    ppsim_fmt_fixed(out, (double)s->p50_ps / PPSIM_PS_PER_MS, 2);
    g_string_append(out, ", p99 ");
    ppsim_fmt_fixed(out, (double)s->p99_ps / PPSIM_PS_PER_MS, 2);
    g_string_append(out, " ms</text>\n");
}

void
ppsim_report_svg_cdf(GString *out, const char *title, const GPtrArray *results)
{
    double lo = G_MAXDOUBLE, hi = 0;
    int n = 0, total = 0;
    for (guint i = 0; i < results->len; i++) {
        const PpsimRunResult *res = g_ptr_array_index(results, i);
        if (res->samples == NULL)
            continue;
        lo = MIN(lo, MIN(res->samples->sorted_ps[0], res->makespan_ps) / PPSIM_PS_PER_MS);
        hi = MAX(hi, MAX(res->samples->sorted_ps[res->samples->n - 1], res->makespan_ps) /
                         PPSIM_PS_PER_MS);
        n++;
        total = res->samples->n;
    }
    double pad = MAX((hi - lo) * 0.03, MAX(hi, 1e-6) * 1e-4);
    lo = n > 0 ? lo - pad : 0;
    hi = n > 0 ? hi + pad : 1;
    g_string_append_printf(out,
                           "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
                           "height=\"%d\" font-family=\"sans-serif\">\n<rect width=\"100%%\" "
                           "height=\"100%%\" fill=\"#ffffff\"/>\n<text x=\"%d\" y=\"22\" "
                           "font-size=\"14\">",
                           (int)CDF_W, (int)CDF_H, (int)CDF_LEFT);
    ppsim_fmt_xml_text(out, title);
    g_string_append_printf(out,
                           ": makespan CDF over %d samples (dashed: deterministic makespan)"
                           "</text>\n",
                           total);
    cdf_axes(out, lo, hi);
    int k = 0;
    for (guint i = 0; i < results->len; i++) {
        const PpsimRunResult *res = g_ptr_array_index(results, i);
        if (res->samples != NULL)
            cdf_curve(out, res, k++, lo, hi);
    }
    g_string_append(out, "</svg>\n");
}
