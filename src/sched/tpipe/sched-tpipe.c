/* sched-tpipe.c: T-Pipe ([TP] §4.1, App. A) and T-Pipe + block-wise T-Recomp ([TP] §4.2,
 * App. B-C). Two chunks per device with the interleaved stage map (device d holds the
 * shallow stage d and the deep stage p + d); fused backward. Each device repeats the order
 * of tpipe-table.c's periodic timetable (T_F : T_B = 1 : 2, as App. A assumes); the replay
 * then times it on the real costs. With `recompute: t-recomp` chunk 1 keeps only its
 * checkpoint after F and is recomputed by an R block before its backward, in [TP] App. C's
 * rounds (`layout: paper`, the default) or in the period-7 timetable searched for the lowest
 * peak (`layout: searched`); without t-recomp both give App. A's closed form. With
 * `offload_optimizer: t-offload` ([TP] §5, Fig. 7(b)) the deep chunk's optimizer step runs
 * on a host CPU worker: its gradients go D2H on the copy stream once its last backward ends
 * (in the cool-down bubble before chunk 1's last backwards), and its weights, quantized to
 * `bits`, come back H2D after the forwards that precede its first forward (the warm-up
 * bubble; in steady training they are the previous step's weights).
 * Any p >= 1, m >= 1; v = 2 only (option `chunks`).
 */
#include "sched/generator.h"
#include "sched/tpipe/tpipe.h"
#include "util/ppsim-error.h"
#include "util/quote.h"

static const PpsimOptionSpec tpipe_options[] = {
    {"recompute", PPSIM_OPTION_STRING, "none",
     "none | t-recomp: recompute chunk 1 block-wise before its backward ([TP] §4.2)"},
    {"layout", PPSIM_OPTION_STRING, "paper",
     "paper | searched: t-recomp's timetable, [TP] App. C's rounds (Fig. 6(d)) or the "
     "lowest-peak one searched"},
    {"offload_optimizer", PPSIM_OPTION_STRING, "none",
     "none | t-offload: the deep chunk's optimizer step on a host CPU worker ([TP] §5)"},
    {"bits", PPSIM_OPTION_INT, "16", "bits per weight of t-offload's H2D (quantized weights)"},
    {"chunks", PPSIM_OPTION_INT, "2",
     "chunks per device; 2 only: [TP] App. A-D define the order for 2"},
    {NULL}};

typedef struct {
    gboolean recomp, offload, paper;
    int bits;
} TpipeOptions;

static gboolean
tpipe_check_options(const PpsimOptions *opts, TpipeOptions *o, GError **error)
{
    gint64 chunks = ppsim_options_get_int(opts, "chunks");
    if (chunks != 2) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "option 'chunks' must be 2 for tpipe, got %" G_GINT64_FORMAT
                    ": [TP] App. A-D give the order for 2 chunks per device only",
                    chunks);
        return FALSE;
    }
    const char *rc = ppsim_options_get_string(opts, "recompute");
    if (g_strcmp0(rc, "none") != 0 && g_strcmp0(rc, "t-recomp") != 0) {
        g_autofree char *q_rc = ppsim_quote(rc);
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "option 'recompute' must be 'none' or 't-recomp', got '%s'", q_rc);
        return FALSE;
    }
    const char *oo = ppsim_options_get_string(opts, "offload_optimizer");
    if (g_strcmp0(oo, "none") != 0 && g_strcmp0(oo, "t-offload") != 0) {
        g_autofree char *q_oo = ppsim_quote(oo);
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "option 'offload_optimizer' must be 'none' or 't-offload', got '%s'", q_oo);
        return FALSE;
    }
    const char *lay = ppsim_options_get_string(opts, "layout");
    if (g_strcmp0(lay, "searched") != 0 && g_strcmp0(lay, "paper") != 0) {
        g_autofree char *q_lay = ppsim_quote(lay);
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "option 'layout' must be 'paper' or 'searched', got '%s'", q_lay);
        return FALSE;
    }
    gint64 bits = ppsim_options_get_int(opts, "bits");
    if (bits < 1 || bits > 16) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "option 'bits' must be between 1 and 16, got %" G_GINT64_FORMAT, bits);
        return FALSE;
    }
    o->recomp = g_strcmp0(rc, "t-recomp") == 0;
    o->offload = g_strcmp0(oo, "t-offload") == 0;
    o->paper = g_strcmp0(lay, "paper") == 0;
    o->bits = (int)bits;
    return TRUE;
}

/* T-Offload of device @d's deep stage (see the file head): WRL anchored to the compute op
 * before its first forward, GOFF to its last backward, OPT on a CPU worker. */
static void
tpipe_add_offload(PpsimSchedule *sched, int d, int bits)
{
    int s = sched->n_devices + d, first_f = -1, last_b = -1;
    const GArray *ops = sched->compute[d];
    for (guint i = 0; i < ops->len; i++) {
        const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
        if (op->stage == s && op->kind == PPSIM_OP_F && first_f < 0)
            first_f = (int)i;
        if (op->stage == s && op->kind == PPSIM_OP_BW)
            last_b = (int)i;
    }
    g_assert(first_f > 0 && last_b > first_f); /* chunk 1's F(0) always comes first */
    PpsimOp wrl = {
        .kind = PPSIM_OP_WRL, .share = bits == 16 ? 0 : bits, .stage = s, .microbatch = -1};
    PpsimOp goff = {.kind = PPSIM_OP_GOFF, .stage = s, .microbatch = -1};
    ppsim_schedule_push_copy(sched, d, wrl, first_f - 1);
    ppsim_schedule_push_copy(sched, d, goff, last_b);
    ppsim_schedule_push_op(
        sched, d,
        (PpsimOp){.kind = PPSIM_OP_OPT, .flags = PPSIM_OP_FLAG_CPU, .stage = s, .microbatch = -1});
}

static gboolean
tpipe_generate(const PpsimPipelineShape *shape, const PpsimScheduleParams *params,
               PpsimSchedule **out, GError **error)
{
    TpipeOptions o = {0};
    if (!tpipe_check_options(params->options, &o, error))
        return FALSE;
    int p = shape->p, m = shape->m;
    g_assert(shape->v == 2);
    g_autoptr(PpsimTpipeTable) table = !o.recomp ? ppsim_tpipe_table_plain(p)
                                       : o.paper ? ppsim_tpipe_table_recomp_paper(p)
                                                 : ppsim_tpipe_table_recomp(p, error);
    if (table == NULL)
        return FALSE;
    PpsimSchedule *sched = ppsim_schedule_new(p, 2 * p, m);
    ppsim_schedule_map_interleaved(sched);
    for (int d = 0; d < p; d++) {
        ppsim_tpipe_table_emit(table, d, m, sched);
        if (o.offload)
            tpipe_add_offload(sched, d, o.bits);
    }
    *out = sched;
    return TRUE;
}

const PpsimScheduleClass ppsim_schedule_tpipe = {
    .name = "tpipe",
    .summary = "T-Pipe: 2 chunks/device, advanced backward; T-Recomp, T-Offload options",
    .reference = "[TP] §4-5, App. A-D",
    .chunks = 2,
    .options = tpipe_options,
    .generate = tpipe_generate,
};
