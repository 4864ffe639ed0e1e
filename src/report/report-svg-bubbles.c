/* report-svg-bubbles.c: stacked bars of each device's bubble breakdown ([HP] B_R, B_I, B_P,
 * then transfer and offload stalls) under the SVG timeline. Pure: appends SVG text. */
#include "report/report-svg-bubbles.h"
#include "util/fmt.h"

#include <string.h>

#define BUBBLE_PARTS 5

static const char *const bubble_name[BUBBLE_PARTS] = {"recompute", "imbalance", "warm-up/cool-down",
                                                      "transfer", "offload"};
static const char *const bubble_color[BUBBLE_PARTS] = {"#9e9e9e", "#e15759", "#4e79a7", "#f28e2b",
                                                       "#b07aa1"};

static void
bubble_num(GString *out, double v)
{
    ppsim_fmt_fixed(out, v, 2);
}

static void
bubble_rect(GString *out, double x, double y, double w, double h, const char *fill)
{
    g_string_append(out, "<rect x=\"");
    bubble_num(out, x);
    g_string_append(out, "\" y=\"");
    bubble_num(out, y);
    g_string_append(out, "\" width=\"");
    bubble_num(out, w);
    g_string_append(out, "\" height=\"");
    bubble_num(out, h);
    g_string_append_printf(out, "\" fill=\"%s\"/>\n", fill);
}

static void
bubble_text(GString *out, double x, double y, double size, const char *anchor, const char *text)
{
    g_string_append(out, "<text x=\"");
    bubble_num(out, x);
    g_string_append(out, "\" y=\"");
    bubble_num(out, y);
    g_string_append(out, "\" font-size=\"");
    bubble_num(out, size);
    g_string_append_printf(out,
                           "\" text-anchor=\"%s\" fill=\"#333333\" "
                           "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">",
                           anchor);
    ppsim_fmt_xml_text(out, text);
    g_string_append(out, "</text>\n");
}

static void
bubble_parts(const PpsimDeviceResult *d, PpsimTime part[BUBBLE_PARTS])
{
    part[0] = d->bubble_recompute_ps;
    part[1] = d->bubble_imbalance_ps;
    part[2] = d->bubble_preparation_ps;
    part[3] = d->bubble_transfer_ps;
    part[4] = d->bubble_offload_ps;
}

double
ppsim_report_svg_bubbles(GString *out, const PpsimRunResult *res, double x, double y, double width)
{
    bubble_text(out, x, y + 12, 11, "start",
                "lost time per device (idle + recompute), stacked; full width = makespan");
    double lx = x;
    for (int k = 0; k < BUBBLE_PARTS; k++) {
        bubble_rect(out, lx, y + 18, 10, 10, bubble_color[k]);
        bubble_text(out, lx + 14, y + 27, 10, "start", bubble_name[k]);
        lx += 26 + 7.0 * (double)strlen(bubble_name[k]);
    }
    y += 36;
    double h = res->p <= 8 ? 12 : res->p <= 16 ? 8 : 5;
    double scale = res->makespan_ps > 0 ? width / (double)res->makespan_ps : 0;
    for (int d = 0; d < res->p; d++) {
        const PpsimDeviceResult *dev = &res->devices[d];
        PpsimTime part[BUBBLE_PARTS];
        bubble_parts(dev, part);
        bubble_rect(out, x, y, width, h, "#f4f4f4");
        double bx = x;
        for (int k = 0; k < BUBBLE_PARTS; k++) {
            if (part[k] <= 0)
                continue;
            double w = (double)part[k] * scale;
            bubble_rect(out, bx, y, w, h, bubble_color[k]);
            bx += w;
        }
        g_autofree char *name = g_strdup_printf("device %d", d);
        bubble_text(out, x - 8, y + h - 2, MIN(10.0, h), "end", name);
        g_autoptr(GString) ms = g_string_new(NULL);
        ppsim_fmt_fixed(ms, (double)dev->bubble_lost_ps / PPSIM_PS_PER_MS, 1);
        g_string_append(ms, " ms");
        bubble_text(out, bx + 4, y + h - 2, MIN(9.0, h), "start", ms->str);
        y += h + 3;
    }
    return y;
}
