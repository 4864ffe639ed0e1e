/* sched-pipeoffload.c: PipeOffload ([PO] §2, §4): activation offload on the generalised
 * interleaved schedule (sched-gis.c, g = p). Each device offloads its n longest-lived chunks
 * (option offload: none | half = ceil(v/2) | full = v | a count): in interleaved order chunk
 * 0 runs its F first and its B last, so lifespans shrink with the chunk index ([PO] §2
 * offloads by lifespan, longest first). For an offloaded (stage, microbatch):
 *   - OFF follows its F on the copy stream (its dependency), at the earliest slot;
 *   - RL is anchored to the latest compute op that still leaves one estimated transfer time
 *     (off_ps) of compute before the B, so the reload lands just in time ([PO] §4.2);
 *   - if the F -> B gap holds less than a round trip (2 off_ps) of compute, the activation
 *     stays on the device ([PO] §4.4).
 * The copy stream runs OFF and RL in the order of their triggers, which alternates one
 * offload and one reload in the steady state, as [PO] §4.2 does on one CUDA stream.
 */
#include "sched/gis.h"
#include "sched/pipeoffload.h"
#include "util/ppsim-error.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    gint32 trigger; /* compute index the copy op follows */
    gint32 kind;    /* OFF before RL on a tie */
    gint32 after;   /* anchor (RL), -1 for OFF */
    PpsimOp op;
} CopyEvent;

static int
copy_event_cmp(const void *a, const void *b)
{
    const CopyEvent *x = a, *y = b;
    if (x->trigger != y->trigger)
        return x->trigger - y->trigger;
    return x->kind - y->kind;
}

static PpsimTime
op_estimate(const PpsimCostEstimates *c, const PpsimOp *op)
{
    const PpsimStageEstimate *st = &c->stage[op->stage];
    switch (op->kind) {
    case PPSIM_OP_F:
        return st->f_ps;
    case PPSIM_OP_B:
        return st->b_ps;
    case PPSIM_OP_W:
        return st->w_ps;
    default:
        return st->b_ps + st->w_ps;
    }
}

/* Plans one device's copy list. */
static void
po_device(PpsimSchedule *s, int d, const PpsimCostEstimates *c, int n_offload)
{
    GArray *ops = s->compute[d];
    int m = s->n_microbatches, p = s->n_devices;
    g_autofree gint32 *f_at = g_new(gint32, (gsize)s->n_stages * m);
    for (guint i = 0; i < ops->len; i++) {
        const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
        if (op->kind == PPSIM_OP_F)
            f_at[op->stage * m + op->microbatch] = i;
    }
    g_autoptr(GArray) events = g_array_new(FALSE, FALSE, sizeof(CopyEvent));
    for (guint i = 0; i < ops->len; i++) {
        const PpsimOp *b = &g_array_index(ops, PpsimOp, i);
        if (b->kind != PPSIM_OP_B || b->stage / p >= n_offload)
            continue;
        gint32 f = f_at[b->stage * m + b->microbatch];
        PpsimTime off = c->stage[b->stage].off_ps, gap = 0, tail = 0;
        for (gint32 k = f + 1; k < (gint32)i; k++)
            gap += op_estimate(c, &g_array_index(ops, PpsimOp, k));
        if (gap < 2 * off)
            continue;          /* [PO] §4.4: the round trip would not hide */
        gint32 anchor = i - 1; /* latest op leaving >= off of compute before the B */
        while (anchor > f + 1 && tail < off)
            tail += op_estimate(c, &g_array_index(ops, PpsimOp, anchor--));
        PpsimOp o = {.kind = PPSIM_OP_OFF, .stage = b->stage, .microbatch = b->microbatch};
        PpsimOp r = o;
        r.kind = PPSIM_OP_RL;
        CopyEvent eo = {f, 0, -1, o}, er = {anchor, 1, anchor, r};
        g_array_append_val(events, eo);
        g_array_append_val(events, er);
    }
    qsort(events->data, events->len, sizeof(CopyEvent), copy_event_cmp);
    for (guint e = 0; e < events->len; e++) {
        const CopyEvent *ev = &g_array_index(events, CopyEvent, e);
        ppsim_schedule_push_copy(s, d, ev->op, ev->after);
    }
}

gboolean
ppsim_pipeoffload_generate(const PpsimPipelineShape *shape, const PpsimCostEstimates *costs,
                           int n_offload, PpsimSchedule **out, GError **error)
{
    PpsimSchedule *s = NULL;
    if (!ppsim_gis_generate(shape, shape->p, &s, error))
        return FALSE;
    for (int d = 0; d < shape->p; d++)
        po_device(s, d, costs, n_offload);
    *out = s;
    return TRUE;
}

static const PpsimOptionSpec po_options[] = {
    {"offload", PPSIM_OPTION_STRING, "half",
     "chunks offloaded per device, longest-lived first: none, half (ceil(v/2)), full (v) or "
     "a count"},
    {NULL}};

static gboolean
po_generate(const PpsimPipelineShape *shape, const PpsimScheduleParams *params, PpsimSchedule **out,
            GError **error)
{
    const char *how = ppsim_options_get_string(params->options, "offload");
    int v = shape->v, n;
    char *end = NULL;
    if (strcmp(how, "none") == 0)
        n = 0;
    else if (strcmp(how, "half") == 0)
        n = (v + 1) / 2;
    else if (strcmp(how, "full") == 0)
        n = v;
    else if ((n = (int)g_ascii_strtoll(how, &end, 10)) < 0 || *end || end == how || n > v) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "pipeoffload: option 'offload' must be none, half, full or a count from 0 "
                    "to v = %d, got '%s'",
                    v, how);
        return FALSE;
    }
    return ppsim_pipeoffload_generate(shape, params->costs, n, out, error);
}

const PpsimScheduleClass ppsim_schedule_pipeoffload = {
    .name = "pipeoffload",
    .summary = "PipeOffload: GIS plus activation offload of the longest-lived chunks",
    .reference = "[PO] §2, §4",
    .chunks = 0,
    .options = po_options,
    .generate = po_generate,
};
