/* report-csv.c: one row per (schedule, device), for spreadsheets and sweep merging. The
 * header is fixed; times are milliseconds, memory bytes or units as memory_unit says. */
#include "report/report.h"
#include "util/fmt.h"

#include <string.h>

static void
csv_field(GString *out, const char *s)
{
    gboolean quote = strpbrk(s, ",\"\n") != NULL;
    if (!quote) {
        g_string_append(out, s);
        return;
    }
    g_string_append_c(out, '"');
    for (const char *p = s; *p; p++) {
        if (*p == '"')
            g_string_append_c(out, '"');
        g_string_append_c(out, *p);
    }
    g_string_append_c(out, '"');
}

void
ppsim_report_csv(GString *out, const PpsimScenario *scenario, const GPtrArray *results)
{
    g_string_append(out, "scenario,schedule,p,v,m,makespan_ms,bubble_ratio,bubble_ratio_span,"
                         "memory_unit,device,busy_ms,first_start_ms,end_ms,device_bubble_ratio,"
                         "peak_activation,peak_memory,oom,tokens_per_s,tflops_per_gpu\n");
    for (guint i = 0; i < results->len; i++) {
        const PpsimRunResult *res = g_ptr_array_index(results, i);
        for (int d = 0; d < res->p; d++) {
            const PpsimDeviceResult *dev = &res->devices[d];
            csv_field(out, scenario->name);
            g_string_append_c(out, ',');
            csv_field(out, res->label);
            g_string_append_printf(out, ",%d,%d,%d,", res->p, res->v, res->m);
            ppsim_fmt_ms(out, res->makespan_ps);
            g_string_append_c(out, ',');
            ppsim_fmt_double(out, res->bubble_ratio);
            g_string_append_c(out, ',');
            ppsim_fmt_double(out, res->bubble_ratio_span);
            g_string_append_printf(out, ",%s,%d,", res->memory_unit, d);
            ppsim_fmt_ms(out, dev->busy_ps);
            g_string_append_c(out, ',');
            ppsim_fmt_ms(out, dev->first_start_ps);
            g_string_append_c(out, ',');
            ppsim_fmt_ms(out, dev->end_ps);
            g_string_append_c(out, ',');
            ppsim_fmt_double(out, dev->bubble_ratio);
            g_string_append_c(out, ',');
            ppsim_fmt_mem(out, dev->peak_activation, res->mem_scale);
            g_string_append_c(out, ',');
            ppsim_fmt_mem(out, dev->peak_memory, res->mem_scale);
            g_string_append_printf(out, ",%s,", dev->oom ? "true" : "false");
            if (res->tokens > 0) /* empty: explicit costs without a sequence length */
                ppsim_fmt_double(out, res->tokens_per_s);
            g_string_append_c(out, ',');
            if (!res->explicit_mode) /* empty: no FLOPs without a model */
                ppsim_fmt_double(out, res->tflops_per_gpu);
            g_string_append_c(out, '\n');
        }
    }
}
