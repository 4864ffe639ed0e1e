/* sched-v-half.c: V-Half ([CM] §3, Table 1): the V-shape building block with offsets (2, 1),
 * about half of 1F1B's activation memory, balanced over devices, and about half of 1F1B's
 * bubble when T_F = T_B = T_W ([ZBREPO] README: "B/2"). The cap defaults to (p+2)//2 M_B,
 * the authors' playground ([HFSPACE]); built by v-sched.c on the cost estimates. Any p >= 1,
 * m >= 1 (v = 2).
 */
#include "sched/vshape/v-sched.h"

static const PpsimOptionSpec vhalf_options[] = {
    {"memory_limit", PPSIM_OPTION_DOUBLE, NULL,
     "activation cap per device in M_B (one microbatch of the device's two stages); "
     "default the scenario's memory.limit when set, else (p+2)//2, as [CM]'s playground"},
    {"budget", PPSIM_OPTION_STRING, "auto", PPSIM_SEARCH_BUDGET_HELP},
    {NULL}};

static gboolean
vhalf_generate(const PpsimPipelineShape *shape, const PpsimScheduleParams *params,
               PpsimSchedule **out, GError **error)
{
    return ppsim_vshape_generate(shape, params, PPSIM_VSHAPE_HALF, (shape->p + 2) / 2, "v-half",
                                 out, error);
}

const PpsimScheduleClass ppsim_schedule_v_half = {
    .name = "v-half",
    .summary = "V-Half: V-shaped 2 chunks/device, ~1/2 of 1F1B's activations and bubble",
    .reference = "[CM] §3, Table 1",
    .chunks = 2,
    .options = vhalf_options,
    .generate = vhalf_generate,
};
