/* sched-gpipe.c: GPipe ([GP] §2.3; [NAR21] §2.2.1). All m forwards, then all m fused
 * backwards in microbatch order, on one stage per device. Every device stashes all m
 * microbatches at its peak. Supports any p >= 1, m >= 1 (v = 1).
 */
#include "sched/generator.h"

static gboolean
gpipe_generate(const PpsimPipelineShape *shape, const PpsimScheduleParams *params,
               PpsimSchedule **out, GError **error)
{
    (void)params;
    (void)error;
    PpsimSchedule *sched = ppsim_schedule_new(shape->p, shape->p, shape->m);
    ppsim_schedule_map_plain(sched);
    for (int d = 0; d < shape->p; d++) {
        for (int j = 0; j < shape->m; j++)
            ppsim_schedule_push(sched, d, PPSIM_OP_F, d, j);
        for (int j = 0; j < shape->m; j++)
            ppsim_schedule_push(sched, d, PPSIM_OP_BW, d, j);
    }
    *out = sched;
    return TRUE;
}

const PpsimScheduleClass ppsim_schedule_gpipe = {
    .name = "gpipe",
    .summary = "GPipe: all forwards, then all backwards (peak m microbatches everywhere)",
    .reference = "[GP] §2.3",
    .chunks = 1,
    .generate = gpipe_generate,
};
