/* report-csv.c: one row per (schedule, device), for spreadsheets and sweep merging. The
 * header is fixed; times are milliseconds, memory bytes or units as memory_unit says. */
#include "report/report.h"
#include "util/fmt.h"

#include <string.h>

void
ppsim_report_csv(GString *out, const PpsimScenario *scenario, const GPtrArray *results)
{
    g_string_append(out, "scenario,schedule,p,v,m,makespan_ms,bubble_ratio,bubble_ratio_span,"
                         "memory_unit,device,busy_ms,first_start_ms,end_ms,device_bubble_ratio,"
                         "peak_activation,peak_memory,oom\n");
    for (guint i = 0; i < results->len; i++) {
        const PpsimRunResult *res = g_ptr_array_index(results, i);
        for (int d = 0; d < res->p; d++) {
            const PpsimDeviceResult *dev = &res->devices[d];
            ppsim_fmt_csv_field(out, scenario->name, FALSE);
            g_string_append_c(out, ',');
            ppsim_fmt_csv_field(out, res->label, FALSE);
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
            g_string_append_printf(out, ",%s\n", dev->oom ? "true" : "false");
        }
    }
}
