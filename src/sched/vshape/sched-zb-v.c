/* sched-zb-v.c: ZB-V ([ZB] §6): 2p stages in a V (device d holds stages d and 2p-1-d), the
 * backward split into B and W, at most p M_B of activations per device (M_B = one
 * microbatch's activations of the device's two stages), built by v-sched.c on the
 * generator's cost estimates. Any p >= 1, m >= 1 (v = 2).
 *
 * With T_F = T_B = T_W and p2p = 0 the cap of p M_B gives [ZB] §6's shape: worker i
 * (1-indexed) warms up with 2p-1 forwards (2p-i of chunk 1, i-1 of chunk 2), then runs
 * 1F-1B-1W groups, and no device idles between its first and last pass (see the tests in
 * check-vshape.c for the grid where this is exact). A lower memory_limit is met exactly.
 */
#include "sched/vshape/v-sched.h"

static const PpsimOptionSpec zbv_options[] = {
    {"memory_limit", PPSIM_OPTION_DOUBLE, NULL,
     "activation cap per device in M_B (one microbatch of the device's two stages); "
     "default the scenario's memory.limit when set, else p, as [ZB] §6"},
    {"budget", PPSIM_OPTION_STRING, "auto", PPSIM_SEARCH_BUDGET_HELP},
    {NULL}};

static gboolean
zbv_generate(const PpsimPipelineShape *shape, const PpsimScheduleParams *params,
             PpsimSchedule **out, GError **error)
{
    return ppsim_vshape_generate(shape, params, PPSIM_VSHAPE_ZB, shape->p, "zb-v", out, error);
}

const PpsimScheduleClass ppsim_schedule_zb_v = {
    .name = "zb-v",
    .summary = "ZB-V: V-shaped 2 chunks/device, B/W split, peak p M_B, zero bubble at F=B=W",
    .reference = "[ZB] §6",
    .chunks = 2,
    .options = zbv_options,
    .generate = zbv_generate,
};
