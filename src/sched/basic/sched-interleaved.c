/* sched-interleaved.c: Megatron-LM's interleaved 1F1B ([NAR21] §2.2.2; order of [MEG]
 * schedules.py get_schedule_table()). v chunks per device, stage s on
 * device s mod p. Chunk-microbatches are issued in groups of g (option group_size, default
 * p) per chunk; rank r runs warmup_r = 2(p - r - 1) + (v - 1) g forwards (all m v when that
 * is more), then one forward and one fused backward alternately, then the remaining
 * backwards. Bubble (p-1)(t_f + t_b)/v; rank r holds min((v-1)g + 2(p-r) - 1, m v)
 * chunk-activations at its peak. Needs p <= g <= m and m a multiple of g; v = 1 is 1F1B.
 * Option `recompute`: a ratio recomputes that share of every chunk before its backward;
 * `t-recomp` recomputes the shallowest chunk (stages 0..p-1) whole and keeps the others
 * ([TP] §4.2, Fig. 6(e): 1F1B-I + T-Recomp). The R sits just before its backward in the
 * device's order, so it runs as soon as the device is free, not on the critical path.
 * Option `pairs: true`: every steady-state forward and the backward pushed after it form one
 * F&B pair (schedule.h PPSIM_OP_FLAG_OVERLAP, cost/overlap.h), Megatron-Core's combined 1F1B
 * (`--overlap-moe-expert-parallel-comm`); warm-up and cool-down ops stay alone.
 */
#include "sched/interleaved.h"
#include "util/ppsim-error.h"

#include <string.h>

static const PpsimOptionSpec interleaved_options[] = {
    {"group_size", PPSIM_OPTION_INT, NULL,
     "microbatches per group g ([MEG] microbatch_group_size_per_vp_stage; default p)"},
    {"recompute", PPSIM_OPTION_STRING, "none",
     "none | t-recomp (chunk 1 recomputed whole, [TP] §4.2) | a ratio in (0, 1] for every chunk"},
    {"pairs", PPSIM_OPTION_STRING, "false",
     "false | true: each steady-state forward and the backward after it as one F&B pair, "
     "the one's TP and EP communication behind the other's compute ([MEG] "
     "--overlap-moe-expert-parallel-comm)"},
    {NULL}};

void
ppsim_interleaved_slot(int k, int g, int v, gboolean forward, int *chunk, int *mb)
{
    int group = g * v;
    int c = (k % group) / g;
    *chunk = forward ? c : v - 1 - c;
    *mb = (k / group) * g + k % g;
}

/* Recompute of a chunk before its backward: share in percent (100 = whole), 0 = none. */
typedef struct {
    int share;
    gboolean t_recomp;
} Recompute;

static void
interleaved_push(PpsimSchedule *s, int r, int k, int g, int v, gboolean forward,
                 const Recompute *rc, guint8 flags)
{
    int chunk, mb;
    ppsim_interleaved_slot(k, g, v, forward, &chunk, &mb);
    int stage = chunk * s->n_devices + r;
    int share = rc->t_recomp ? (chunk == 0 ? 100 : 0) : rc->share;
    if (!forward && share > 0)
        ppsim_schedule_push_op(s, r,
                               (PpsimOp){.kind = PPSIM_OP_R,
                                         .share = share == 100 ? 0 : share,
                                         .stage = stage,
                                         .microbatch = mb});
    ppsim_schedule_push_op(s, r,
                           (PpsimOp){.kind = forward ? PPSIM_OP_F : PPSIM_OP_BW,
                                     .stage = stage,
                                     .microbatch = mb,
                                     .flags = flags});
}

static gboolean
interleaved_generate(const PpsimPipelineShape *shape, const PpsimScheduleParams *params,
                     PpsimSchedule **out, GError **error)
{
    int p = shape->p, v = shape->v, m = shape->m;
    int g = ppsim_options_is_set(params->options, "group_size")
                ? (int)ppsim_options_get_int(params->options, "group_size")
                : p;
    if (v > 1 && !ppsim_options_is_set(params->options, "group_size")) {
        char value[16];
        g_snprintf(value, sizeof value, "%d", g);
        ppsim_choice_add(params->choices, "group_size", value, "default: p");
    }
    if (v > 1 && (g < p || g > m || m % g != 0)) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "interleaved needs p <= g <= m and m a multiple of the group size g "
                    "([MEG]); got p = %d, g = %d, m = %d",
                    p, g, m);
        return FALSE;
    }
    Recompute rc = {0};
    if (!ppsim_options_get_recompute(params->options, "recompute", TRUE, &rc.share, &rc.t_recomp,
                                     error))
        return FALSE;
    if (rc.t_recomp && v < 2) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "option 'recompute': t-recomp needs at least 2 chunks per device (it "
                    "recomputes the shallowest of them, [TP] §4.2); got v = %d",
                    v);
        return FALSE;
    }
    const char *pairs = ppsim_options_get_string(params->options, "pairs");
    if (strcmp(pairs, "true") != 0 && strcmp(pairs, "false") != 0) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "option 'pairs' must be true or false, got '%s'", pairs);
        return FALSE;
    }
    guint8 pair = strcmp(pairs, "true") == 0 ? PPSIM_OP_FLAG_OVERLAP : 0;
    if (pair && (rc.share > 0 || rc.t_recomp)) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "option 'pairs' needs option 'recompute: none': an F&B pair's backward "
                    "follows its forward directly, with no recompute op between");
        return FALSE;
    }
    PpsimSchedule *s = ppsim_schedule_new(p, p * v, m);
    ppsim_schedule_map_interleaved(s);
    int total = m * v;
    for (int r = 0; r < p; r++) {
        /* v = 1 is plain 1F1B: Megatron's non-interleaved warm-up min(p - r - 1, m) */
        int warmup = v == 1 ? MIN(p - r - 1, m) : MIN(2 * (p - r - 1) + (v - 1) * g, total);
        int f = 0, b = 0;
        for (; f < warmup; f++)
            interleaved_push(s, r, f, g, v, TRUE, &rc, 0);
        for (; f < total; f++, b++) {
            interleaved_push(s, r, f, g, v, TRUE, &rc, pair);
            interleaved_push(s, r, b, g, v, FALSE, &rc, pair);
        }
        for (; b < total; b++)
            interleaved_push(s, r, b, g, v, FALSE, &rc, 0);
    }
    *out = s;
    return TRUE;
}

const PpsimScheduleClass ppsim_schedule_interleaved = {
    .name = "interleaved",
    .summary = "Megatron interleaved 1F1B: v chunks per device (training.chunks), groups of g",
    .reference = "[NAR21] §2.2.2; [MEG] schedules.py",
    .chunks = 0,
    .options = interleaved_options,
    .generate = interleaved_generate,
};
