/* sched-zb-h1.c: ZB-H1 ([ZB] §2.1, Table 2): 1F1B's memory (p M_B on the first worker) with
 * the bubble cut to (p-1)(T_F + T_B - T_W) by splitting the backward and delaying W; rank r
 * keeps r Ws pending. Makespan m(T_F+T_B+T_W) + (p-1)(T_F+T_B-T_W) for m >= p. Any p, m.
 */
#include "sched/zb/zb-handcrafted.h"

static gboolean
zb_h1_generate(const PpsimPipelineShape *shape, const PpsimScheduleParams *params,
               PpsimSchedule **out, GError **error)
{
    (void)params;
    (void)error;
    *out = ppsim_zb_handcrafted(shape->p, shape->m, 0, 1);
    return TRUE;
}

const PpsimScheduleClass ppsim_schedule_zb_h1 = {
    .name = "zb-h1",
    .summary = "Zero Bubble ZB-H1: B/W split, W delayed; 1F1B memory, bubble (p-1)(F+B-W)",
    .reference = "[ZB] §2.1, Table 2",
    .chunks = 1,
    .generate = zb_h1_generate,
};
