/* run-result.c: ownership and summaries of PpsimRunResult; see run-result.h. */
#include "run-result.h"

PpsimRunResult *
ppsim_run_result_new(void)
{
    return g_new0(PpsimRunResult, 1);
}

void
ppsim_run_result_free(PpsimRunResult *res)
{
    if (res == NULL)
        return;
    for (int d = 0; d < res->p; d++) {
        if (res->compute_timing)
            g_array_free(res->compute_timing[d], TRUE);
        if (res->copy_timing)
            g_array_free(res->copy_timing[d], TRUE);
    }
    g_free(res->compute_timing);
    g_free(res->copy_timing);
    if (res->transfers)
        g_array_free(res->transfers, TRUE);
    if (res->mem_samples)
        g_array_free(res->mem_samples, TRUE);
    if (res->flows)
        g_array_free(res->flows, TRUE);
    if (res->choices)
        g_array_unref(res->choices);
    ppsim_schedule_free(res->schedule);
    ppsim_sample_summary_free(res->samples);
    g_free(res->devices);
    g_free(res->stages);
    g_free(res->hosts);
    g_free(res->label);
    g_free(res->generator);
    g_free(res->scenario);
    g_free(res);
}

gint64
ppsim_run_result_max_peak_activation(const PpsimRunResult *res)
{
    gint64 peak = 0;
    for (int d = 0; d < res->p; d++)
        peak = MAX(peak, res->devices[d].peak_activation);
    return peak;
}

gint64
ppsim_run_result_max_peak_memory(const PpsimRunResult *res)
{
    gint64 peak = 0;
    for (int d = 0; d < res->p; d++)
        peak = MAX(peak, res->devices[d].peak_memory);
    return peak;
}

PpsimMemVerdict
ppsim_mem_verdict(gint64 peak, gint64 peak_low, gint64 limit)
{
    if (limit <= 0 || peak <= limit)
        return PPSIM_MEM_FITS;
    return MIN(peak, peak_low) > limit ? PPSIM_MEM_OOM : PPSIM_MEM_TIGHT;
}

const char *
ppsim_mem_verdict_name(PpsimMemVerdict v)
{
    return v == PPSIM_MEM_OOM ? "oom" : v == PPSIM_MEM_TIGHT ? "tight" : "fits";
}

PpsimMemVerdict
ppsim_run_result_verdict(const PpsimRunResult *res)
{
    PpsimMemVerdict v = PPSIM_MEM_FITS;
    for (int d = 0; d < res->p; d++)
        v = MAX(v, res->devices[d].memory_verdict);
    for (int h = 0; h < res->n_hosts; h++)
        if (res->hosts[h].oom)
            v = PPSIM_MEM_OOM;
    return v;
}

/* A device is over_budget exactly when its verdict is not "fits", and oom when it is "oom"
 * (sim-metrics.c): both tests are the verdict's. */
gboolean
ppsim_run_result_fits(const PpsimRunResult *res)
{
    return ppsim_run_result_verdict(res) == PPSIM_MEM_FITS;
}

gboolean
ppsim_run_result_any_oom(const PpsimRunResult *res)
{
    return ppsim_run_result_verdict(res) == PPSIM_MEM_OOM;
}

void
ppsim_sample_summary_free(PpsimSampleSummary *s)
{
    if (s == NULL)
        return;
    g_free(s->makespan_ps);
    g_free(s->sorted_ps);
    g_free(s->critical_share);
    g_free(s->slack_mean_ps);
    g_free(s->critical_ops);
    g_free(s);
}
