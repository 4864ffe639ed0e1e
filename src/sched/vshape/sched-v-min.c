/* sched-v-min.c: V-Min ([CM] §3, Table 1): the V-shape building block with offsets (1, 1),
 * about a third of 1F1B's activation memory, balanced over devices, with about 2/3 of 1F1B's
 * bubble plus O(n) when T_F = T_B = T_W ([ZBREPO] README: "2B/3 + O(n)"; it degrades when
 * F, B and W differ). The cap defaults to (p+4)//3 M_B, the authors' playground ([HFSPACE]);
 * built by v-sched.c on the cost estimates. Any p >= 1, m >= 1 (v = 2).
 */
#include "sched/vshape/v-sched.h"

static const PpsimOptionSpec vmin_options[] = {
    {"memory_limit", PPSIM_OPTION_DOUBLE, NULL,
     "activation cap per device in M_B (one microbatch of the device's two stages); "
     "default the scenario's memory.limit when set, else (p+4)//3, as [CM]'s playground"},
    {"budget", PPSIM_OPTION_STRING, "auto", PPSIM_SEARCH_BUDGET_HELP},
    {NULL}};

static gboolean
vmin_generate(const PpsimPipelineShape *shape, const PpsimScheduleParams *params,
              PpsimSchedule **out, GError **error)
{
    return ppsim_vshape_generate(shape, params, PPSIM_VSHAPE_MIN, (shape->p + 4) / 3, "v-min", out,
                                 error);
}

const PpsimScheduleClass ppsim_schedule_v_min = {
    .name = "v-min",
    .summary = "V-Min: V-shaped 2 chunks/device, ~1/3 of 1F1B's activations, ~2/3 its bubble",
    .reference = "[CM] §3, Table 1",
    .chunks = 2,
    .options = vmin_options,
    .generate = vmin_generate,
};
