/* sched-zb-h2.c: ZB-H2 ([ZB] §2.2, Table 2): p - r - 1 extra warm-up forwards on rank r and
 * 2r Ws pending fill every bubble when T_F = T_B = T_W; bubble (p-1)(T_F + T_B - 2T_W), peak
 * (2p-1) M_B on the first worker. Any p, m.
 */
#include "sched/zb/zb-handcrafted.h"

static gboolean
zb_h2_generate(const PpsimPipelineShape *shape, const PpsimScheduleParams *params,
               PpsimSchedule **out, GError **error)
{
    (void)params;
    (void)error;
    *out = ppsim_zb_handcrafted(shape->p, shape->m, 1, 2);
    return TRUE;
}

const PpsimScheduleClass ppsim_schedule_zb_h2 = {
    .name = "zb-h2",
    .summary = "Zero Bubble ZB-H2: more warm-up, W fills the rest; zero bubble when F=B=W",
    .reference = "[ZB] §2.2, Table 2",
    .chunks = 1,
    .generate = zb_h2_generate,
};
