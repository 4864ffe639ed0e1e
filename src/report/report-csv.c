/* report-csv.c: one row per (schedule, device), for spreadsheets and sweep merging. The
 * header is fixed (the device columns of columns.h that have a CSV name); times are
 * milliseconds, memory bytes or units as memory_unit says. */
#include "report/report.h"
#include "report/columns.h"
#include "util/fmt.h"

void
ppsim_report_csv(GString *out, const PpsimScenario *scenario, const GPtrArray *results)
{
    g_string_append(out, "scenario,schedule,p,v,m,makespan_ms,bubble_ratio,bubble_ratio_span,"
                         "memory_unit");
    for (const PpsimDeviceColumn *c = ppsim_device_columns; c->json; c++)
        if (c->csv != NULL)
            g_string_append_printf(out, ",%s", c->csv);
    g_string_append(out, ",tokens_per_s,tflops_per_gpu\n");
    for (guint i = 0; i < results->len; i++) {
        const PpsimRunResult *res = g_ptr_array_index(results, i);
        for (int d = 0; d < res->p; d++) {
            ppsim_fmt_csv_field(out, scenario->name, FALSE);
            g_string_append_c(out, ',');
            ppsim_fmt_csv_field(out, res->label, FALSE);
            g_string_append_printf(out, ",%d,%d,%d,", res->p, res->v, res->m);
            ppsim_fmt_ms(out, res->makespan_ps);
            g_string_append_c(out, ',');
            ppsim_fmt_double(out, res->bubble_ratio);
            g_string_append_c(out, ',');
            ppsim_fmt_double(out, res->bubble_ratio_span);
            g_string_append_printf(out, ",%s", res->memory_unit);
            for (const PpsimDeviceColumn *c = ppsim_device_columns; c->json; c++)
                if (c->csv != NULL) {
                    g_string_append_c(out, ',');
                    ppsim_device_column_append(out, c, res, &res->devices[d]);
                }
            g_string_append_c(out, ',');
            if (res->tokens > 0) /* empty: explicit costs without a sequence length */
                ppsim_fmt_double(out, res->tokens_per_s);
            g_string_append_c(out, ',');
            if (!res->explicit_mode) /* empty: no FLOPs without a model */
                ppsim_fmt_double(out, res->tflops_per_gpu);
            g_string_append_c(out, '\n');
        }
    }
}
