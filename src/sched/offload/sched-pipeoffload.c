/* sched-pipeoffload.c: PipeOffload ([PO] §2-§4): activation offload on a pipeline of v
 * chunks per device (stage s on device s mod p).
 *
 * Compute order, option `strategy`:
 *   - uniform (default): PipeOffload's own ([PO] §2-3.2): one microbatch's building block with
 *     B/W split, W right after its B, repeated every T with collisions resolved
 *     (uniform-repeat.c). Each stage's contribution to the peak then follows its lifespan,
 *     so offloading the longest-lived stages cuts the peak better than linearly (Fig. 3);
 *   - interleaved: GIS (sched-gis.c, g = p), the interleaving strategy, where offloading a
 *     stage cuts at most linearly ([PO] Fig. 2, 4).
 * Which stages, option `offload`: none, half (ceil(v/2) per device), full (v), a count per
 * device — the longest-lived first ([PO] §2), lifespan measured as the estimated compute the
 * device runs from F(s, j) to W(s, j), averaged over j — or an explicit list of stages.
 * For an offloaded (stage, microbatch):
 *   - OFF follows its F on the copy stream (its dependency), at the earliest slot;
 *   - RL is anchored to the latest compute op that still leaves one estimated transfer time
 *     (off_ps) of compute before the B, so the reload lands just in time ([PO] §4.2);
 *   - if the F -> B gap holds less than a round trip (2 off_ps) of compute, the activation
 *     stays on the device ([PO] §4.4).
 * The copy stream runs OFF and RL in the order of their triggers, which alternates one
 * offload and one reload in the steady state, as [PO] §4.2 does on one CUDA stream.
 * Option `co_schedule` ([PO] App. D, co-schedule.h): GPUs behind one contended PCIe switch
 * plan their slots together, staggering each direction, and cross-device events then keep
 * their copy streams in synchronized-interleaved rounds; elsewhere devices are independent.
 */
#include "sched/offload/gis.h"
#include "sched/pipeoffload.h"
#include "sched/offload/stream-plan.h"
#include "sched/offload/uniform-repeat.h"
#include "util/ppsim-error.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>

/* A copy op planned on the device's nominal timeline (compute back to back, as estimated). */
typedef struct {
    PpsimTime start; /* nominal slot on the copy stream */
    gint32 trigger;  /* compute op it follows: its F (OFF) or its anchor (RL) */
    gint32 after;    /* anchor (RL), -1 for OFF */
    PpsimOp op;
} CopySlot;

static int
copy_slot_cmp(const void *a, const void *b)
{
    const CopySlot *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->trigger != y->trigger)
        return x->trigger - y->trigger;
    return (int)x->op.kind - (int)y->op.kind; /* OFF before RL */
}

/* Earliest start >= @t of a slot of length @len free in @a and, if non-NULL, in @b. */
static PpsimTime
plan_earliest2(const PpsimStreamPlan *a, const PpsimStreamPlan *b, PpsimTime t, PpsimTime len,
               PpsimTime by)
{
    for (;;) {
        PpsimTime u = ppsim_stream_plan_earliest(a, t, len, by);
        if (b == NULL || u > by)
            return u;
        PpsimTime w = ppsim_stream_plan_earliest(b, u, len, by);
        if (w == u)
            return u;
        t = w;
    }
}

/* Latest start >= @lo of a slot of length @len ending by @end, free in @a and, if non-NULL,
 * in @b; -1 when there is none. */
static PpsimTime
plan_latest2(const PpsimStreamPlan *a, const PpsimStreamPlan *b, PpsimTime lo, PpsimTime end,
             PpsimTime len)
{
    for (;;) {
        PpsimTime u = ppsim_stream_plan_latest(a, lo, end, len);
        if (u < 0 || b == NULL)
            return u;
        PpsimTime w = ppsim_stream_plan_latest(b, lo, u + len, len);
        if (w == u || w < 0)
            return w;
        end = w + len;
    }
}

/* Estimated compute of device @d's list from F(s, j) to W(s, j) inclusive, summed over j,
 * per stage: the lifespan ranking of [PO] §2 (the same measure for both strategies). */
static void
po_lifespans(const PpsimSchedule *s, int d, const PpsimCostEstimates *c, PpsimTime *life)
{
    GArray *ops = s->compute[d];
    int m = s->n_microbatches;
    g_autofree PpsimTime *at = g_new0(PpsimTime, (gsize)s->n_stages * m); /* clock at F */
    PpsimTime clock = 0;
    for (guint i = 0; i < ops->len; i++) {
        const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
        if (op->kind == PPSIM_OP_F)
            at[op->stage * m + op->microbatch] = clock;
        clock += ppsim_estimate_op_ps(c, op);
        if (op->kind == PPSIM_OP_W || op->kind == PPSIM_OP_BW)
            life[op->stage] += clock - at[op->stage * m + op->microbatch];
    }
}

/* Marks the @n longest-lived stages of each device (ties: the earlier stage). */
static void
po_pick_longest(const PpsimSchedule *s, const PpsimCostEstimates *c, int n, gboolean *mask)
{
    g_autofree PpsimTime *life = g_new0(PpsimTime, s->n_stages);
    for (int d = 0; d < s->n_devices; d++)
        po_lifespans(s, d, c, life);
    for (int d = 0; d < s->n_devices; d++) {
        for (int k = 0; k < n; k++) {
            int best = -1;
            for (int st = 0; st < s->n_stages; st++)
                if (s->stage_device[st] == d && !mask[st] && (best < 0 || life[st] > life[best]))
                    best = st;
            if (best >= 0)
                mask[best] = TRUE;
        }
    }
}

/* Plans one device's copy list for the stages marked in @mask, as [PO] §4.2 does on one
 * stream: on the nominal timeline (@st, @en: the start and end of each compute op of the
 * device's list), each offload takes the earliest free slot after its F (left to right),
 * then each reload the latest free slot that ends before its B and starts after its offload
 * (right to left). With @dir (nullable: the D2H and H2D plans of the device's switch, shared
 * by its GPUs), a slot must also be free there, so the GPUs of a switch stagger their
 * transfers of one direction ([PO] §4.2: "we stagger the offload streams") wherever the
 * round trip still hides; only where it would not do they share the switch. Staggering
 * trades memory for time: a later offload or an earlier reload keeps the activation on the
 * device longer. When the
 * stream is too busy for that (k > 1), the offload goes right after its F and the reload
 * right before its B anyway: they queue on the stream and the B waits, which is the
 * slowdown [PO] Formula 1 predicts. An activation whose F -> B gap holds less compute than
 * a round trip stays on the device ([PO] §4.4). Each reload is anchored to the last compute
 * op before its B that ends by its slot. The copy list follows the slots (ties: the earlier
 * trigger first), so every copy op ahead of a reload is triggered before that reload's B and
 * the stream can never wait on compute that waits on it. */
static void
po_device(PpsimSchedule *s, int d, const PpsimCostEstimates *c, const gboolean *mask,
          const PpsimTime *st, const PpsimTime *en, PpsimStreamPlan **dir)
{
    GArray *ops = s->compute[d];
    int m = s->n_microbatches;
    gsize n_keys = (gsize)s->n_stages * m;
    /* offloads, left to right */
    PpsimStreamPlan *plan = ppsim_stream_plan_new();
    g_autoptr(GArray) slots = g_array_new(FALSE, FALSE, sizeof(CopySlot));
    g_autofree gint32 *b_at = g_new(gint32, n_keys);
    g_autofree gint32 *off_slot = g_new(gint32, n_keys); /* its OFF's index in slots, or -1 */
    memset(off_slot, 0xff, n_keys * sizeof(gint32));
    for (guint i = 0; i < ops->len; i++) {
        const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
        if (op->kind == PPSIM_OP_B || op->kind == PPSIM_OP_BW)
            b_at[op->stage * m + op->microbatch] = i;
    }
    for (guint i = 0; i < ops->len; i++) {
        const PpsimOp *f = &g_array_index(ops, PpsimOp, i);
        if (f->kind != PPSIM_OP_F || !mask[f->stage])
            continue;
        gint32 b = b_at[f->stage * m + f->microbatch];
        PpsimTime off = c->stage[f->stage].off_ps;
        if (st[b] - en[i] < 2 * off)
            continue;                   /* [PO] §4.4: the round trip would not hide */
        PpsimTime by = st[b] - 2 * off; /* a later start would not hide the round trip */
        PpsimTime t = plan_earliest2(plan, dir ? dir[0] : NULL, en[i], off, by);
        if (t > by && dir != NULL)
            t = ppsim_stream_plan_earliest(plan, en[i], off,
                                           by); /* no staggered slot: share the switch */
        if (t > by)
            t = en[i]; /* congested: queue behind what is there */
        ppsim_stream_plan_take(plan, t, t + off);
        if (dir != NULL)
            ppsim_stream_plan_take(dir[0], t, t + off);
        CopySlot cs = {t,
                       (gint32)i,
                       -1,
                       {.kind = PPSIM_OP_OFF, .stage = f->stage, .microbatch = f->microbatch}};
        off_slot[f->stage * m + f->microbatch] = (gint32)slots->len;
        g_array_append_val(slots, cs);
    }
    /* reloads, right to left (by their B) */
    for (gint32 b = (gint32)ops->len - 1; b >= 0; b--) {
        const PpsimOp *op = &g_array_index(ops, PpsimOp, b);
        if ((op->kind != PPSIM_OP_B && op->kind != PPSIM_OP_BW) ||
            off_slot[op->stage * m + op->microbatch] < 0)
            continue;
        CopySlot o = g_array_index(slots, CopySlot, off_slot[op->stage * m + op->microbatch]);
        PpsimTime off = c->stage[o.op.stage].off_ps, lo = o.start + off;
        PpsimTime t = plan_latest2(plan, dir ? dir[1] : NULL, lo, st[b], off);
        if (t < 0 && dir != NULL)
            t = ppsim_stream_plan_latest(plan, lo, st[b],
                                         off); /* no staggered slot: share the switch */
        if (t < 0)
            t = st[b] - off; /* congested: queue, and B will wait for it */
        ppsim_stream_plan_take(plan, t, t + off);
        if (dir != NULL)
            ppsim_stream_plan_take(dir[1], t, t + off);
        gint32 anchor = b - 1; /* last compute op before B that ends by t */
        while (anchor >= 0 && en[anchor] > t)
            anchor--;
        CopySlot r = {t, anchor, anchor, o.op};
        r.op.kind = PPSIM_OP_RL;
        g_array_append_val(slots, r);
    }
    ppsim_stream_plan_free(plan);
    if (slots->len > 1)
        qsort(slots->data, slots->len, sizeof(CopySlot), copy_slot_cmp);
    for (guint e = 0; e < slots->len; e++) {
        const CopySlot *cs = &g_array_index(slots, CopySlot, e);
        ppsim_schedule_push_copy(s, d, cs->op, cs->after);
    }
}

/* Plans every device's copy list. Independent devices plan on their own nominal timeline
 * (compute back to back, as estimated). Devices of a @group (nullable: none) that share a
 * switch plan on the pipeline's estimated timeline instead, one D2H and one H2D plan per
 * switch, device by device, so their transfers of one direction are staggered. */
gboolean
ppsim_po_plan_copies(PpsimSchedule *s, const PpsimCostEstimates *c, const gboolean *mask,
                     const int *group, GError **error)
{
    int p = s->n_devices;
    gsize n = ppsim_schedule_n_ops(s); /* compute ops only, so far */
    g_autofree PpsimTime *st = g_new(PpsimTime, n + 1), *en = g_new(PpsimTime, n + 1);
    if (group != NULL) {
        g_autoptr(PpsimScheduleIndex) idx = ppsim_schedule_index_new(s, error);
        if (idx == NULL || !ppsim_schedule_estimate(s, idx, c, st, en, NULL, error))
            return FALSE;
    } else {
        for (gsize id = 0, d = 0; d < (gsize)p; d++) {
            PpsimTime clock = 0;
            for (guint i = 0; i < s->compute[d]->len; i++, id++) {
                st[id] = clock;
                clock += ppsim_estimate_op_ps(c, &g_array_index(s->compute[d], PpsimOp, i));
                en[id] = clock;
            }
        }
    }
    g_autofree PpsimStreamPlan **dir = g_new0(PpsimStreamPlan *, 2 * p); /* per group id */
    for (gsize id = 0, d = 0; d < (gsize)p; id += s->compute[d]->len, d++) {
        PpsimStreamPlan **gd = NULL;
        if (group != NULL) {
            g_assert(group[d] >= 0 && group[d] < p);
            gd = &dir[2 * group[d]];
            for (int k = 0; k < 2; k++)
                if (gd[k] == NULL)
                    gd[k] = ppsim_stream_plan_new();
        }
        po_device(s, (int)d, c, mask, st + id, en + id, gd);
    }
    for (int k = 0; k < 2 * p; k++)
        ppsim_stream_plan_free(dir[k]);
    return TRUE;
}

/* Option `co_schedule` ([PO] App. D): which devices' copy streams are coordinated, as host
 * link ids in @group ([p]), and how. auto: sync-interleaved where devices share a PCIe switch
 * whose uplink they can oversubscribe, independent elsewhere (the authors' rule: "if the GPUs
 * have independent PCIe connections, we schedule offload/reload passes independently"). In
 * explicit mode there are no links; the sync modes then pair devices 2k and 2k+1, as on a
 * DGX A100. */
gboolean
ppsim_po_co_mode(const char *text, const PpsimCostEstimates *costs, int p, int *group,
                 PpsimCoSchedule *mode, GError **error)
{
    gboolean is_auto = strcmp(text, "auto") == 0;
    if (is_auto || strcmp(text, "sync-interleaved") == 0)
        *mode = PPSIM_CO_SYNC_INTERLEAVED;
    else if (strcmp(text, "independent") == 0)
        *mode = PPSIM_CO_INDEPENDENT;
    else if (strcmp(text, "sync-parallel") == 0)
        *mode = PPSIM_CO_SYNC_PARALLEL;
    else {
        g_autofree char *q_text = ppsim_quote(text);
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "pipeoffload: option 'co_schedule' must be auto, independent, "
                    "sync-interleaved or sync-parallel, got '%s'",
                    q_text);
        return FALSE;
    }
    gboolean links = costs->host_link != NULL && costs->n_devices == p;
    if (is_auto && !(links && costs->host_link_contended))
        *mode = PPSIM_CO_INDEPENDENT;
    for (int d = 0; d < p; d++)
        group[d] = links ? costs->host_link[d] : d / 2;
    return TRUE;
}

gboolean
ppsim_pipeoffload_plan(PpsimSchedule *s, const PpsimCostEstimates *costs, const gboolean *mask,
                       const char *co_schedule, GError **error)
{
    g_autofree int *group = g_new(int, s->n_devices);
    PpsimCoSchedule co;
    if (!ppsim_po_co_mode(co_schedule ? co_schedule : "auto", costs, s->n_devices, group, &co,
                          error))
        return FALSE;
    if (!ppsim_po_plan_copies(s, costs, mask, co == PPSIM_CO_INDEPENDENT ? NULL : group, error))
        return FALSE;
    return ppsim_co_schedule(s, costs, group, co, error);
}

int
ppsim_pipeoffload_plan_passes(const PpsimCostEstimates *costs, int n_devices,
                              const char *co_schedule)
{
    g_autofree int *group = g_new(int, n_devices);
    PpsimCoSchedule co;
    if (!ppsim_po_co_mode(co_schedule ? co_schedule : "auto", costs, n_devices, group, &co, NULL))
        return -1;
    return co == PPSIM_CO_INDEPENDENT ? 0 : 2;
}

/* The compute order of @strategy and the stages to offload (@stage_mask, or the @n_offload
 * longest-lived of each device): the part of a PipeOffload schedule every co-schedule
 * shares. */
gboolean
ppsim_po_compute(const PpsimPipelineShape *shape, const PpsimCostEstimates *costs,
                 PpsimPoStrategy strategy, int n_offload, const gboolean *stage_mask,
                 PpsimSchedule **out, gboolean **mask_out, GError **error)
{
    g_autoptr(PpsimSchedule) s = NULL;
    if (strategy == PPSIM_PO_INTERLEAVED) {
        if (!ppsim_gis_generate(shape, shape->p, &s, error))
            return FALSE;
    } else {
        s = ppsim_schedule_new(shape->p, shape->p * shape->v, shape->m);
        ppsim_schedule_map_interleaved(s);
        if (!ppsim_uniform_repeat_fill(s, costs, error))
            return FALSE;
    }
    gboolean *mask = g_new0(gboolean, s->n_stages);
    if (stage_mask != NULL)
        memcpy(mask, stage_mask, s->n_stages * sizeof(gboolean));
    else
        po_pick_longest(s, costs, n_offload, mask);
    *mask_out = mask;
    *out = g_steal_pointer(&s);
    return TRUE;
}

gboolean
ppsim_pipeoffload_generate(const PpsimPipelineShape *shape, const PpsimCostEstimates *costs,
                           PpsimPoStrategy strategy, int n_offload, const gboolean *stage_mask,
                           const char *co_schedule, PpsimSchedule **out, GError **error)
{
    g_autofree int *group = g_new(int, shape->p);
    PpsimCoSchedule co;
    if (!ppsim_po_co_mode(co_schedule ? co_schedule : "auto", costs, shape->p, group, &co, error))
        return FALSE;
    g_autoptr(PpsimSchedule) s = NULL;
    g_autofree gboolean *mask = NULL;
    if (!ppsim_po_compute(shape, costs, strategy, n_offload, stage_mask, &s, &mask, error) ||
        !ppsim_pipeoffload_plan(s, costs, mask, co_schedule, error))
        return FALSE;
    *out = g_steal_pointer(&s);
    return TRUE;
}

static const PpsimOptionSpec po_options[] = {
    {"offload", PPSIM_OPTION_STRING, "half",
     "what to offload: none, half (ceil(v/2) stages per device), full (all v), a count per "
     "device (longest-lived first), or a list of global stages such as \"0,8\""},
    {"strategy", PPSIM_OPTION_STRING, "uniform",
     "uniform (PipeOffload's uniform repeat of one building block) or interleaved (GIS)"},
    PPSIM_PO_CO_OPTION,
    PPSIM_PO_CO_M_OPTION,
    {NULL}};

const PpsimOptionSpec ppsim_po_preset_options[] = {
    PPSIM_PO_CO_OPTION, PPSIM_PO_CO_M_OPTION, {NULL}};

/* Parses a comma-separated list of stages into @mask ([n_stages]). */
static gboolean
po_parse_list(const char *text, int n_stages, gboolean *mask)
{
    g_auto(GStrv) items = g_strsplit(text, ",", -1);
    if (items[0] == NULL)
        return FALSE;
    for (int i = 0; items[i] != NULL; i++) {
        char *item = g_strstrip(items[i]), *end = NULL;
        gint64 st = g_ascii_strtoll(item, &end, 10);
        if (end == item || *end != '\0' || st < 0 || st >= n_stages)
            return FALSE;
        mask[st] = TRUE;
    }
    return TRUE;
}

static gboolean
po_generate(const PpsimPipelineShape *shape, const PpsimScheduleParams *params, PpsimSchedule **out,
            GError **error)
{
    const char *how = ppsim_options_get_string(params->options, "offload");
    const char *strat = ppsim_options_get_string(params->options, "strategy");
    int v = shape->v, S = shape->p * shape->v, n = 0;
    PpsimPoStrategy strategy;
    if (strcmp(strat, "uniform") == 0)
        strategy = PPSIM_PO_UNIFORM;
    else if (strcmp(strat, "interleaved") == 0)
        strategy = PPSIM_PO_INTERLEAVED;
    else {
        g_autofree char *q_strat = ppsim_quote(strat);
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "pipeoffload: option 'strategy' must be uniform or interleaved, got '%s'",
                    q_strat);
        return FALSE;
    }
    g_autofree gboolean *mask = NULL;
    char *end = NULL;
    if (strcmp(how, "none") == 0)
        n = 0;
    else if (strcmp(how, "half") == 0)
        n = (v + 1) / 2;
    else if (strcmp(how, "full") == 0)
        n = v;
    else if (strchr(how, ',') != NULL || strchr(how, ' ') != NULL) {
        mask = g_new0(gboolean, S);
        if (!po_parse_list(how, S, mask)) {
            g_autofree char *q_how = ppsim_quote(how);
            g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                        "pipeoffload: option 'offload' lists stages from 0 to %d separated "
                        "by commas, got '%s'",
                        S - 1, q_how);
            return FALSE;
        }
    } else if ((n = (int)g_ascii_strtoll(how, &end, 10)) < 0 || *end || end == how || n > v) {
        g_autofree char *q_how = ppsim_quote(how);
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "pipeoffload: option 'offload' must be none, half, full, a count from 0 "
                    "to v = %d, or a list of stages such as \"0,%d\", got '%s'",
                    v, shape->p, q_how);
        return FALSE;
    }
    return ppsim_pipeoffload_generate_auto(shape, params, strategy, n, mask, out, error);
}

const PpsimScheduleClass ppsim_schedule_pipeoffload = {
    .name = "pipeoffload",
    .summary = "PipeOffload: uniform-repeat (or GIS) schedule, offloading the longest-lived "
               "stages",
    .reference = "[PO] §2-4",
    .chunks = 0,
    .options = po_options,
    .generate = po_generate,
};
