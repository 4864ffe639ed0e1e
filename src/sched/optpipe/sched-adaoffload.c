/* sched-adaoffload.c: AdaOffload ([OP] §4.1.3, App. D Algorithm 1): the densest fill phase the
 * memory limit allows (as many forwards before each stage's first backward as fit), then
 * PipeOffload's rules; built in adaoffload.c. One stage per device (v = 1), any p, m >= 1.
 * The cap is option `memory_limit` (M_B), else the scenario's memory.limit, else none.
 */
#include "sched/optpipe/adaoffload.h"

static const PpsimOptionSpec ada_options[] = {
    {"memory_limit", PPSIM_OPTION_STRING, NULL,
     "activation cap per device in M_B (one microbatch of its stage); default the scenario's "
     "memory.limit when set, else none"},
    {"co_schedule", PPSIM_OPTION_STRING, "auto",
     "copy streams of GPUs sharing a PCIe switch, as pipeoffload's option"},
    {"budget", PPSIM_OPTION_STRING, "auto", PPSIM_SEARCH_BUDGET_HELP},
    {NULL}};

static gboolean
ada_generate(const PpsimPipelineShape *shape, const PpsimScheduleParams *params,
             PpsimSchedule **out, GError **error)
{
    const char *cap = ppsim_options_is_set(params->options, "memory_limit")
                          ? ppsim_options_get_string(params->options, "memory_limit")
                          : NULL;
    g_autofree gint64 *limit = NULL;
    if (!ppsim_optpipe_limits(shape, params->costs, cap, "adaoffload", &limit, error))
        return FALSE;
    if (cap == NULL)
        ppsim_memory_cap_note(params->choices, params->costs, limit, shape->p);
    gint64 budget;
    gboolean is_auto;
    if (!ppsim_search_budget_get(params->options, "adaoffload",
                                 ppsim_adaoffload_auto_budget(shape->p, shape->m), &budget,
                                 &is_auto, error))
        return FALSE;
    PpsimOpEval eval;
    PpsimAdaInfo info;
    if (!ppsim_adaoffload_build(shape, params->costs, limit, TRUE,
                                ppsim_options_get_string(params->options, "co_schedule"), budget,
                                &info, out, &eval, error)) {
        g_prefix_error(error, "adaoffload: ");
        return FALSE;
    }
    ppsim_adaoffload_note_budget(params->choices, shape, params->costs, budget, is_auto, &info,
                                 &eval);
    return TRUE;
}

const PpsimScheduleClass ppsim_schedule_adaoffload = {
    .name = "adaoffload",
    .summary = "AdaOffload: densest fill the memory limit allows, then PipeOffload's rules",
    .reference = "[OP] App. D",
    .chunks = 1,
    .options = ada_options,
    .generate = ada_generate,
};
