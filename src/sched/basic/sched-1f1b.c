/* sched-1f1b.c: 1F1B / PipeDream-Flush ([NAR21] §2.2.1), in Megatron-LM's order ([MEG]
 * schedules.py: rank r runs warmup_r = min(p - r - 1, m) forwards, then alternates one
 * forward and one fused backward, then drains the remaining backwards).
 * Bubble (p-1)(T_F+T_B+T_W); device r holds min(p - r, m) microbatches at its peak.
 * Any p >= 1, m >= 1 (including m < p); v = 1.
 * Option `recompute`: a ratio r recomputes that share of every stage's activation by an R
 * just before each backward ([TP] §6's baseline "1F1B + R=50%"); F then keeps only the rest.
 * The R is one block, so its buffer holds the whole share until the backward ends; the
 * paper's layer-grouped recompute re-runs one layer at a time inside the backward.
 */
#include "sched/generator.h"

static const PpsimOptionSpec f1b1_options[] = {
    {"recompute", PPSIM_OPTION_STRING, "none",
     "none | a ratio in (0, 1]: share of each stage's activation recomputed before its backward"},
    {NULL}};

static void
f1b1_push_backward(PpsimSchedule *sched, int r, int mb, int share)
{
    if (share > 0)
        ppsim_schedule_push_op(sched, r,
                               (PpsimOp){.kind = PPSIM_OP_R,
                                         .share = share == 100 ? 0 : share,
                                         .stage = r,
                                         .microbatch = mb});
    ppsim_schedule_push(sched, r, PPSIM_OP_BW, r, mb);
}

static gboolean
f1b1_generate(const PpsimPipelineShape *shape, const PpsimScheduleParams *params,
              PpsimSchedule **out, GError **error)
{
    int p = shape->p, m = shape->m, share = 0;
    gboolean t_recomp = FALSE;
    if (!ppsim_options_get_recompute(params->options, "recompute", FALSE, &share, &t_recomp, error))
        return FALSE;
    PpsimSchedule *sched = ppsim_schedule_new(p, p, m);
    ppsim_schedule_map_plain(sched);
    for (int r = 0; r < p; r++) {
        int warmup = MIN(p - r - 1, m);
        int next_f = 0, next_b = 0;
        for (; next_f < warmup; next_f++)
            ppsim_schedule_push(sched, r, PPSIM_OP_F, r, next_f);
        while (next_f < m) {
            ppsim_schedule_push(sched, r, PPSIM_OP_F, r, next_f++);
            f1b1_push_backward(sched, r, next_b++, share);
        }
        while (next_b < m)
            f1b1_push_backward(sched, r, next_b++, share);
    }
    *out = sched;
    return TRUE;
}

const PpsimScheduleClass ppsim_schedule_1f1b = {
    .name = "1f1b",
    .summary = "1F1B (PipeDream-Flush), Megatron warm-up min(p-r-1, m); fused backward",
    .reference = "[NAR21] §2.2.1; [MEG] schedules.py",
    .chunks = 1,
    .options = f1b1_options,
    .generate = f1b1_generate,
};
