/* sched-dualpipev.c: DualPipeV ([DUALPIPE] dualpipev.py; the "cut-in-half" DualPipe of
 * [CUTHALF]): DualPipe folded onto half the devices, one copy of the parameters: 2p stages
 * in a V (device d holds stages d and 2p-1-d), every microbatch through all of them. Each
 * device runs the 8-step program of dualpipe.h with P = p and h = d, overlapping in the
 * steady state a forward of one chunk with the full backward of the other as one F&B op.
 * [DUALPIPE] README: bubble (PP/2-1)(F&B + B - 3W) (B a full backward), PP+1 activations
 * per device, PP = 2p stages here. Needs m >= 2p (as dualpipev.py asserts); any p >= 1.
 */
#include "sched/dualpipe/dualpipe.h"
#include "util/ppsim-error.h"

static gboolean
dualpipev_generate(const PpsimPipelineShape *shape, const PpsimScheduleParams *params,
                   PpsimSchedule **out, GError **error)
{
    (void)params;
    int p = shape->p, m = shape->m;
    if (m < 2 * p) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "dualpipev needs m >= 2p = %d microbatches, got training.microbatches = %d",
                    2 * p, m);
        return FALSE;
    }
    PpsimSchedule *sched = ppsim_schedule_new(p, 2 * p, m);
    ppsim_schedule_map_vshape(sched);
    for (int d = 0; d < p; d++) {
        PpsimDualPipeDevice dev = {.device = d,
                                   .half_rank = d,
                                   .half_ranks = p,
                                   .chunks = m,
                                   .stage = {d, 2 * p - 1 - d},
                                   .mb_base = {0, 0}};
        ppsim_dualpipe_device_program(sched, &dev);
    }
    *out = sched;
    return TRUE;
}

const PpsimScheduleClass ppsim_schedule_dualpipev = {
    .name = "dualpipev",
    .summary = "DualPipeV: DualPipe cut in half, V-shaped 2 chunks/device, F&B pairs, m >= 2p",
    .reference = "[DUALPIPE] dualpipev.py; [CUTHALF]",
    .chunks = 2,
    .options = NULL,
    .generate = dualpipev_generate,
};
