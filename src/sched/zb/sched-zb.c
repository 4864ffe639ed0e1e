/* sched-zb.c: the automatic Zero Bubble schedule ([ZB] §3): one stage per device, backward
 * split into B and W, built on the generator's per-stage cost estimates (heterogeneous
 * stages and hardware mode alike) to the smallest span it finds while each device's
 * activations stay within memory_limit: a number is a count of M_B (one microbatch's
 * activation of the device's stage), ZB-1p is p (the default) and ZB-2p 2p ([ZB] §5.1); a size
 * such as 20GiB is a per-device activation budget in bytes (hardware mode). The search is in
 * zb-auto.c. Without the option, the scenario's memory.limit (less each device's static
 * memory) is the cap when the scenario sets one, else p M_B. Any p >= 1, m >= 1;
 * memory_limit >= 1 M_B on every stage. Option plan_times: median plans with every stage
 * given the median stage's F, B and W, as the authors' runtime does ([ZBREPO]
 * zerobubble/runtime.py); the schedule is then replayed on the real per-stage costs.
 */
#include "sched/zb-auto.h"
#include "util/ppsim-error.h"
#include "util/quote.h"

#include <math.h>
#include <stdlib.h>

static const PpsimOptionSpec zb_options[] = {
    {"memory_limit", PPSIM_OPTION_STRING, NULL,
     "activation cap per device: a number of M_B (one microbatch of the device's stage), "
     ">= 1, default the scenario's memory.limit when set, else p (ZB-1p), 2p gives ZB-2p; "
     "or a size (e.g. 20GiB), in bytes of "
     "activation, for hardware mode"},
    {"plan_times", PPSIM_OPTION_STRING, "stages",
     "F/B/W times the search plans with: stages (each stage's own estimate) or median "
     "(every stage the median stage's F, B and W, as the [ZBREPO] runtime plans; memory stays "
     "per stage); the replay always uses each stage's own"},
    {"budget", PPSIM_OPTION_STRING, "auto", PPSIM_SEARCH_BUDGET_HELP},
    {NULL}};

static gboolean
zb_refuse(GError **error, const char *min, const char *got)
{
    g_autofree char *q = ppsim_quote(got);
    g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                "zb: option 'memory_limit' must be at least %s (one microbatch's activation of "
                "a stage: the minimum that lets a stage run an F), got %s",
                min, q);
    return FALSE;
}

/* Fills @limit[d] (memory units) from the option: a count of M_B, or a size in bytes. */
static gboolean
zb_limits(const char *text, const PpsimCostEstimates *c, int p, gint64 *limit, GError **error)
{
    char *end = NULL;
    double cap = text ? g_ascii_strtod(text, &end) : p;
    if (text == NULL || (end != text && *end == '\0')) {
        if (!isfinite(cap)) {
            g_autofree char *q = ppsim_quote(text);
            g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                        "zb: option 'memory_limit' must be a finite number of M_B (at least 1) "
                        "or a size such as 20GiB, got '%s' (leave it out for the default)",
                        q);
            return FALSE;
        }
        if (!(cap >= 1))
            return zb_refuse(error, "1 (M_B)", text);
        /* a huge cap is no cap: clamped below the range of the conversion */
        for (int d = 0; d < p; d++)
            limit[d] = (gint64)MIN(floor(cap * (double)c->stage[d].act + 1e-9), 0x1p61);
        return TRUE;
    }
    double bytes;
    if (!ppsim_units_parse(text, PPSIM_DIM_BYTES, NULL, &bytes, error)) {
        g_prefix_error(error, "zb: option 'memory_limit' is neither a number of M_B nor a size: ");
        return FALSE;
    }
    gint64 need = 1;
    for (int d = 0; d < p; d++)
        need = MAX(need, c->stage[d].act);
    if (!(bytes >= (double)need) || !isfinite(bytes)) {
        g_autofree char *min =
            g_strdup_printf("%" G_GINT64_FORMAT " bytes (%.2f GiB)", need, need / 1073741824.0);
        return zb_refuse(error, min, text);
    }
    for (int d = 0; d < p; d++)
        limit[d] = (gint64)bytes;
    return TRUE;
}

static int
zb_time_cmp(gconstpointer a, gconstpointer b)
{
    PpsimTime x = *(const PpsimTime *)a, y = *(const PpsimTime *)b;
    return (x > y) - (x < y);
}

/* The median of @n times (@v is sorted in place): the upper one when @n is even, element
 * n/2 of the sorted list, as [ZBREPO] takes it. */
static PpsimTime
zb_median(PpsimTime *v, int n)
{
    qsort(v, n, sizeof *v, zb_time_cmp);
    return v[n / 2];
}

/* Fills @plan with @c whose every stage has the median stage's F, B and W (@stage[p] is the
 * storage); memory, R, offload and overlap estimates stay each stage's own. */
static void
zb_median_times(const PpsimCostEstimates *c, int p, PpsimCostEstimates *plan,
                PpsimStageEstimate *stage)
{
    g_autofree PpsimTime *v = g_new(PpsimTime, 3 * p);
    for (int d = 0; d < p; d++) {
        v[d] = c->stage[d].f_ps;
        v[p + d] = c->stage[d].b_ps;
        v[2 * p + d] = c->stage[d].w_ps;
    }
    PpsimTime f = zb_median(v, p), b = zb_median(v + p, p), w = zb_median(v + 2 * p, p);
    for (int d = 0; d < p; d++) {
        stage[d] = c->stage[d];
        stage[d].f_ps = f;
        stage[d].b_ps = b;
        stage[d].w_ps = w;
    }
    *plan = *c;
    plan->stage = stage;
}

static gboolean
zb_generate(const PpsimPipelineShape *shape, const PpsimScheduleParams *params, PpsimSchedule **out,
            GError **error)
{
    int p = shape->p;
    const char *text = ppsim_options_is_set(params->options, "memory_limit")
                           ? ppsim_options_get_string(params->options, "memory_limit")
                           : NULL;
    g_autofree gint64 *limit = g_new(gint64, p);
    g_autofree int *map = g_new(int, p);
    for (int d = 0; d < p; d++)
        map[d] = d;
    gboolean from_scenario = FALSE;
    if (text == NULL &&
        !ppsim_memory_cap_default(params->costs, map, p, p, limit, &from_scenario, "zb", error))
        return FALSE;
    if (!from_scenario && !zb_limits(text, params->costs, p, limit, error))
        return FALSE;
    if (from_scenario)
        ppsim_memory_cap_note(params->choices, params->costs, limit, p);
    else if (text == NULL) {
        char value[16];
        g_snprintf(value, sizeof value, "%d", p);
        ppsim_choice_add(params->choices, "memory_limit", value,
                         "default p M_B (ZB-1p); memory.limit unset");
    }
    gint64 budget;
    gboolean is_auto;
    if (!ppsim_search_budget_get(params->options, "zb", ppsim_zb_auto_budget(p, shape->m), &budget,
                                 &is_auto, error))
        return FALSE;
    const char *times = ppsim_options_get_string(params->options, "plan_times");
    PpsimCostEstimates median;
    g_autofree PpsimStageEstimate *median_stage = NULL;
    const PpsimCostEstimates *plan = params->costs;
    if (g_strcmp0(times, "median") == 0) {
        median_stage = g_new(PpsimStageEstimate, p);
        zb_median_times(params->costs, p, &median, median_stage);
        plan = &median;
    } else if (g_strcmp0(times, "stages") != 0) {
        g_autofree char *q = ppsim_quote(times);
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "zb: option 'plan_times' must be stages or median, got '%s'", q);
        return FALSE;
    }
    PpsimZbAutoInfo info;
    PpsimSchedule *sched =
        ppsim_zb_auto(p, shape->m, plan, limit, PPSIM_ZB_AUTO_DEFAULT, budget, &info, error);
    if (sched == NULL) {
        g_prefix_error(error, "zb: ");
        return FALSE;
    }
    if (info.cut)
        ppsim_search_budget_note(
            params->choices, budget, is_auto, info.n_run, info.n_total, info.makespan,
            ppsim_makespan_lower_bound(plan, sched->stage_device, sched->n_stages, p, shape->m));
    *out = sched;
    return TRUE;
}

const PpsimScheduleClass ppsim_schedule_zb = {
    .name = "zb",
    .summary = "Zero Bubble automatic (ZB-1p/ZB-2p): greedy search under a memory cap in M_B",
    .reference = "[ZB] §3",
    .chunks = 1,
    .options = zb_options,
    .generate = zb_generate,
};
