/* sched-zb-v.c: ZB-V ([ZB] §6): 2p stages in a V (device d holds stages d and 2p-1-d), the
 * backward split into B and W, at most p M_B of activations per device (M_B = one
 * microbatch's activations of the device's two stages), zero bubble when T_F = T_B = T_W.
 *
 * Built by list scheduling on the generator's cost estimates, as [ZB] §3 builds its
 * automatic schedules: each device, when free, runs the ready B with the earliest arrival;
 * else a ready F if it fits under the memory cap (the second chunk's F first, so microbatches
 * reach their loss early); else the oldest pending W; else it waits for the next arrival.
 * W passes thus fill what would be bubbles. Any p >= 1, m >= 1 (v = 2).
 *
 * Measured (explicit mode, T_F = T_B = T_W, p2p = 0): the peak is exactly p M_B on every
 * device (and exactly the cap when memory_limit is lower), the last devices have no bubble,
 * but the first ones end a constant gap after their work, independent of m: p - 1 to about
 * 1.25p passes for p <= 16 (p = 4, m = 8: span 52 for 48 of work), where the paper's
 * hand-made warm-up (2p - i forwards of the first chunk and i - 1 of the second on worker
 * i) reaches zero. Closing that gap is open work; the summary says "near-zero" until then.
 */
#include "sched/schedule.h"
#include "util/ppsim-error.h"

#include <string.h>

typedef struct {
    int p, m, S;
    const PpsimCostEstimates *c;
    PpsimTime *f_ready, *b_ready; /* [S * m] arrival of the op's input; -1 unknown */
    int *next_f, *next_b;         /* [S] next microbatch per stage, in order */
    GQueue **pending_w;           /* [p] of (stage * m + mb) + 1 */
    gint64 *mem, *limit;          /* [p] in-flight memory units, and the cap per device */
} ZbV;

static int
zbv_device(const ZbV *z, int s)
{
    return s < z->p ? s : z->S - 1 - s;
}

static PpsimTime
zbv_arrival(const ZbV *z, int from_stage, int to_stage, PpsimTime end)
{
    return zbv_device(z, from_stage) == zbv_device(z, to_stage) ? end : end + z->c->comm_ps;
}

/* Picks the op device @d runs at time @t; returns its kind, or -1 when nothing is ready
 * (then *@wake is the next time something becomes ready, or -1). */
static int
zbv_pick(ZbV *z, int d, PpsimTime t, int *stage, PpsimTime *wake)
{
    int stages[2] = {z->S - 1 - d, d}; /* second chunk first */
    PpsimTime best = -1;
    *wake = -1;
    for (int k = 0; k < 2; k++) { /* B: earliest arrival */
        int s = stages[k], j = z->next_b[s];
        if (j >= z->m || z->b_ready[s * z->m + j] < 0)
            continue;
        PpsimTime r = z->b_ready[s * z->m + j];
        if (r <= t && (best < 0 || r < best))
            best = r, *stage = s;
        else if (r > t && (*wake < 0 || r < *wake))
            *wake = r;
    }
    if (best >= 0)
        return PPSIM_OP_B;
    for (int k = 0; k < 2; k++) { /* F under the memory cap */
        int s = stages[k], j = z->next_f[s];
        if (j >= z->m || z->f_ready[s * z->m + j] < 0)
            continue;
        PpsimTime r = z->f_ready[s * z->m + j];
        /* a first-chunk F keeps room for its second-chunk F, which leads to the loss and
         * so to the Bs that free memory: without it a low cap can starve itself */
        gint64 need = z->c->stage[s].act + (s == d ? z->c->stage[z->S - 1 - d].act : 0);
        if (r <= t && z->mem[d] + need <= z->limit[d]) {
            *stage = s;
            return PPSIM_OP_F;
        }
        if (r > t && (*wake < 0 || r < *wake))
            *wake = r;
    }
    if (!g_queue_is_empty(z->pending_w[d]))
        return PPSIM_OP_W;
    return -1;
}

static void
zbv_execute(ZbV *z, PpsimSchedule *sched, int d, int kind, int s, PpsimTime t, PpsimTime *end)
{
    const PpsimStageEstimate *st;
    int j;
    if (kind == PPSIM_OP_W) {
        int key = GPOINTER_TO_INT(g_queue_pop_head(z->pending_w[d])) - 1;
        s = key / z->m;
        j = key % z->m;
        st = &z->c->stage[s];
        *end = t + st->w_ps;
        z->mem[d] -= st->act_w;
    } else if (kind == PPSIM_OP_F) {
        j = z->next_f[s]++;
        st = &z->c->stage[s];
        *end = t + st->f_ps;
        z->mem[d] += st->act;
        if (s + 1 < z->S)
            z->f_ready[(s + 1) * z->m + j] = zbv_arrival(z, s, s + 1, *end);
        else
            z->b_ready[s * z->m + j] = *end; /* the loss is on this device */
    } else {
        j = z->next_b[s]++;
        st = &z->c->stage[s];
        *end = t + st->b_ps;
        z->mem[d] -= st->act - st->act_w;
        if (s > 0)
            z->b_ready[(s - 1) * z->m + j] = zbv_arrival(z, s, s - 1, *end);
        g_queue_push_tail(z->pending_w[d], GINT_TO_POINTER(s * z->m + j + 1));
    }
    ppsim_schedule_push(sched, d, kind, s, j);
}

/* Event loop over devices: the one free earliest decides next (ties: lowest id). A device
 * with nothing to run is blocked until an input arrives or another device moves on. */
static gboolean
zbv_run(ZbV *z, PpsimSchedule *sched, GError **error)
{
    g_autofree PpsimTime *free_at = g_new0(PpsimTime, z->p);
    g_autofree int *left = g_new(int, z->p);               /* ops still to place per device */
    g_autofree gboolean *blocked = g_new0(gboolean, z->p); /* idle at free_at, nothing due */
    for (int d = 0; d < z->p; d++)
        left[d] = 6 * z->m;
    for (;;) {
        int d = -1;
        for (int e = 0; e < z->p; e++)
            if (left[e] > 0 && !blocked[e] && (d < 0 || free_at[e] < free_at[d]))
                d = e;
        if (d < 0) {
            gboolean any = FALSE;
            for (int e = 0; e < z->p; e++)
                any |= left[e] > 0;
            if (!any)
                return TRUE;
            g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                        "zb-v: memory_limit is too small to make progress");
            return FALSE;
        }
        int s = -1;
        PpsimTime wake, end;
        int kind = zbv_pick(z, d, free_at[d], &s, &wake);
        if (kind >= 0) {
            zbv_execute(z, sched, d, kind, s, free_at[d], &end);
            free_at[d] = end;
            left[d]--;
            memset(blocked, 0, z->p * sizeof(gboolean)); /* new inputs may be due */
            continue;
        }
        /* idle: until an input arrives, or until another device has moved on */
        PpsimTime next = wake;
        for (int e = 0; e < z->p; e++)
            if (e != d && left[e] > 0 && free_at[e] > free_at[d] && (next < 0 || free_at[e] < next))
                next = free_at[e];
        if (next >= 0)
            free_at[d] = next;
        else
            blocked[d] = TRUE;
    }
}

static const PpsimOptionSpec zbv_options[] = {
    {"memory_limit", PPSIM_OPTION_DOUBLE, NULL,
     "activation cap per device in M_B (one microbatch of the device's two stages); "
     "default p, as [ZB] §6"},
    {NULL}};

static gboolean
zbv_generate(const PpsimPipelineShape *shape, const PpsimScheduleParams *params,
             PpsimSchedule **out, GError **error)
{
    int p = shape->p, m = shape->m, S = 2 * p;
    double cap = ppsim_options_is_set(params->options, "memory_limit")
                     ? ppsim_options_get_double(params->options, "memory_limit")
                     : p;
    ZbV z = {.p = p, .m = m, .S = S, .c = params->costs};
    z.f_ready = g_new(PpsimTime, S * m);
    z.b_ready = g_new(PpsimTime, S * m);
    for (int i = 0; i < S * m; i++) {
        z.f_ready[i] = i < m ? 0 : -1; /* stage 0 inputs are there from the start */
        z.b_ready[i] = -1;
    }
    z.next_f = g_new0(int, S);
    z.next_b = g_new0(int, S);
    z.pending_w = g_new(GQueue *, p);
    z.mem = g_new0(gint64, p);
    z.limit = g_new(gint64, p);
    for (int d = 0; d < p; d++) {
        z.pending_w[d] = g_queue_new();
        z.limit[d] = (gint64)(cap * (z.c->stage[d].act + z.c->stage[S - 1 - d].act));
    }
    g_autoptr(PpsimSchedule) sched = ppsim_schedule_new(p, S, m);
    ppsim_schedule_map_vshape(sched);
    gboolean ok = zbv_run(&z, sched, error);
    for (int d = 0; d < p; d++)
        g_queue_free(z.pending_w[d]);
    g_free(z.pending_w);
    g_free(z.f_ready);
    g_free(z.b_ready);
    g_free(z.next_f);
    g_free(z.next_b);
    g_free(z.mem);
    g_free(z.limit);
    if (ok)
        *out = g_steal_pointer(&sched);
    return ok;
}

const PpsimScheduleClass ppsim_schedule_zb_v = {
    .name = "zb-v",
    .summary = "ZB-V (greedy construction): V-shaped 2 chunks/device, peak p M_B, near-zero "
               "bubble",
    .reference = "[ZB] §6",
    .chunks = 2,
    .options = zbv_options,
    .generate = zbv_generate,
};
