/* sched-dualpipe.c: DualPipe ([DSV3] §3.2.1, [DUALPIPE] dualpipe.py): two pipelines in
 * opposite directions over the same p devices: stage s < p of the forward direction on device
 * s, stage p + k of the reverse direction (its k-th stage, the model's layers of stage k) on
 * device p-1-k. Device d thus holds the model's stages d and p-1-d, and the model is stored
 * twice (2x parameters per device); the reduction of the two copies' gradients, a collective
 * between devices d and p-1-d after the last backward, is not modelled.
 * Microbatches 0..m/2-1 enter at device 0, m/2..m-1 at device p-1. Each device runs the
 * 8-step program of dualpipe.h with P = p/2 and h = min(d, p-1-d); in the steady state it
 * pairs a forward of one direction with a full backward of the other as one overlapped F&B
 * op. [DUALPIPE] README: bubble (PP/2-1)(F&B + B - 3W) (B a full backward), 2x parameters,
 * PP+1 activations per device, PP = p stages here.
 * Needs p even and m even with m >= 2p ([DUALPIPE] dualpipe.py asserts the same).
 */
#include "sched/dualpipe/dualpipe.h"
#include "util/ppsim-error.h"

static gboolean
dualpipe_generate(const PpsimPipelineShape *shape, const PpsimScheduleParams *params,
                  PpsimSchedule **out, GError **error)
{
    (void)params;
    int p = shape->p, m = shape->m;
    if (p % 2 != 0) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "dualpipe needs an even number of devices (training.pp), got %d", p);
        return FALSE;
    }
    if (m % 2 != 0 || m < 2 * p) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "dualpipe needs an even number of microbatches m >= 2p = %d (m/2 per "
                    "direction), got training.microbatches = %d",
                    2 * p, m);
        return FALSE;
    }
    PpsimSchedule *sched = ppsim_schedule_new(p, 2 * p, m);
    ppsim_schedule_map_bidirectional(sched);
    for (int d = 0; d < p; d++) {
        gboolean second = d >= p / 2; /* its phase 0 is the reverse direction */
        int fwd = d, rev = 2 * p - 1 - d;
        PpsimDualPipeDevice dev = {.device = d,
                                   .half_rank = MIN(d, p - 1 - d),
                                   .half_ranks = p / 2,
                                   .chunks = m / 2,
                                   .stage = {second ? rev : fwd, second ? fwd : rev},
                                   .mb_base = {second ? m / 2 : 0, second ? 0 : m / 2}};
        ppsim_dualpipe_device_program(sched, &dev);
    }
    *out = sched;
    return TRUE;
}

const PpsimScheduleClass ppsim_schedule_dualpipe = {
    .name = "dualpipe",
    .summary = "DualPipe: two directions on p devices (2x parameters), F&B pairs, m >= 2p",
    .reference = "[DSV3] §3.2.1; [DUALPIPE]",
    .chunks = 2,
    .pipes = 2,
    .options = NULL,
    .generate = dualpipe_generate,
};
