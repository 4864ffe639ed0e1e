/* sched-1f1b.c: 1F1B / PipeDream-Flush ([NAR21] §2.2.1), in Megatron-LM's order ([MEG]
 * schedules.py: rank r runs warmup_r = min(p - r - 1, m) forwards, then alternates one
 * forward and one fused backward, then drains the remaining backwards).
 * Bubble (p-1)(T_F+T_B+T_W); device r holds min(p - r, m) microbatches at its peak.
 * Any p >= 1, m >= 1 (including m < p); v = 1.
 */
#include "sched/generator.h"

static gboolean
f1b1_generate(const PpsimPipelineShape *shape, const PpsimScheduleParams *params,
              PpsimSchedule **out, GError **error)
{
    (void)params;
    (void)error;
    int p = shape->p, m = shape->m;
    PpsimSchedule *sched = ppsim_schedule_new(p, p, m);
    ppsim_schedule_map_plain(sched);
    for (int r = 0; r < p; r++) {
        int warmup = MIN(p - r - 1, m);
        int next_f = 0, next_b = 0;
        for (; next_f < warmup; next_f++)
            ppsim_schedule_push(sched, r, PPSIM_OP_F, r, next_f);
        while (next_f < m) {
            ppsim_schedule_push(sched, r, PPSIM_OP_F, r, next_f++);
            ppsim_schedule_push(sched, r, PPSIM_OP_BW, r, next_b++);
        }
        while (next_b < m)
            ppsim_schedule_push(sched, r, PPSIM_OP_BW, r, next_b++);
    }
    *out = sched;
    return TRUE;
}

const PpsimScheduleClass ppsim_schedule_1f1b = {
    .name = "1f1b",
    .summary = "1F1B (PipeDream-Flush), Megatron warm-up min(p-r-1, m); fused backward",
    .reference = "[NAR21] §2.2.1; [MEG] schedules.py",
    .chunks = 1,
    .generate = f1b1_generate,
};
