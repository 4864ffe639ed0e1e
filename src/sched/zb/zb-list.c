/* zb-list.c: list scheduling of B/W-split pipelines under a memory cap, as [ZB] §3 builds
 * its automatic schedules: each device, when free, runs the ready B with the earliest
 * arrival; else a ready F that fits under its memory cap (its later stage first, so
 * microbatches reach the loss early; an earlier-stage F keeps room for its partner's); else
 * its oldest pending W; else it waits for the next arrival. W passes thus fill what would be
 * bubbles. Works on the generator's cost estimates only. Used by the automatic `zb`
 * (zb-auto.c) as one candidate per working cap; it still handles two stages per device.
 *
 * Alone it is not [ZB] §3's scheduler: on one stage per device with [ZB] Table 5's costs it
 * gives bubble rates 0.2115 (cap p) and 0.1206 (cap 2p) at M_W = M_B, 0.2062 and 0.0936 at
 * M_W = 0.3664 M_B, against the paper's 0.1585 (ZB-1p) and 0.0433 (ZB-2p); zb-auto.c's
 * microbatch-by-microbatch builder does better there, this one when the cap is below p.
 */
#include "sched/zb/zb-list.h"
#include "util/ppsim-error.h"

#include <string.h>

typedef struct {
    int p, m, S;
    const PpsimSchedule *sched; /* for the stage map */
    int (*stages)[2];           /* [p] the device's stages, later one first; -1 = none */
    const PpsimCostEstimates *c;
    PpsimTime *f_ready, *b_ready; /* [S * m] arrival of the op's input; -1 unknown */
    int *next_f, *next_b;         /* [S] next microbatch per stage, in order */
    GQueue **pending_w;           /* [p] of (stage * m + mb) + 1 */
    gint64 *mem, *limit;          /* [p] in-flight memory units, and the cap per device */
} ZbList;

static int
zbl_device(const ZbList *z, int s)
{
    return z->sched->stage_device[s];
}

static PpsimTime
zbl_arrival(const ZbList *z, int from_stage, int to_stage, PpsimTime end)
{
    return zbl_device(z, from_stage) == zbl_device(z, to_stage) ? end : end + z->c->comm_ps;
}

/* Picks the op device @d runs at time @t; returns its kind, or -1 when nothing is ready
 * (then *@wake is the next time something becomes ready, or -1). */
static int
zbl_pick(ZbList *z, int d, PpsimTime t, int *stage, PpsimTime *wake)
{
    const int *stages = z->stages[d]; /* later stage first */
    PpsimTime best = -1;
    *wake = -1;
    for (int k = 0; k < 2 && stages[k] >= 0; k++) { /* B: earliest arrival */
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
    for (int k = 0; k < 2 && stages[k] >= 0; k++) { /* F under the memory cap */
        int s = stages[k], j = z->next_f[s];
        if (j >= z->m || z->f_ready[s * z->m + j] < 0)
            continue;
        PpsimTime r = z->f_ready[s * z->m + j];
        /* a first-chunk F keeps room for its second-chunk F, which leads to the loss and
         * so to the Bs that free memory: without it a low cap can starve itself */
        int partner = stages[0] != s ? stages[0] : -1;
        gint64 need = z->c->stage[s].act + (partner >= 0 ? z->c->stage[partner].act : 0);
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
zbl_execute(ZbList *z, PpsimSchedule *sched, int d, int kind, int s, PpsimTime t, PpsimTime *end)
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
            z->f_ready[(s + 1) * z->m + j] = zbl_arrival(z, s, s + 1, *end);
        else
            z->b_ready[s * z->m + j] = *end; /* the loss is on this device */
    } else {
        j = z->next_b[s]++;
        st = &z->c->stage[s];
        *end = t + st->b_ps;
        z->mem[d] -= st->act - st->act_w;
        if (s > 0)
            z->b_ready[(s - 1) * z->m + j] = zbl_arrival(z, s, s - 1, *end);
        g_queue_push_tail(z->pending_w[d], GINT_TO_POINTER(s * z->m + j + 1));
    }
    ppsim_schedule_push(sched, d, kind, s, j);
}

/* The device that receives the input the op just run on @s produced, and when; -1 if none
 * (the loss stays on its device). */
static int
zbl_receiver(const ZbList *z, int kind, int s, PpsimTime *arrival)
{
    if (kind == PPSIM_OP_F && s + 1 < z->S) {
        *arrival = z->f_ready[(s + 1) * z->m + z->next_f[s] - 1];
        return zbl_device(z, s + 1);
    }
    if (kind == PPSIM_OP_B && s > 0) {
        *arrival = z->b_ready[(s - 1) * z->m + z->next_b[s] - 1];
        return zbl_device(z, s - 1);
    }
    return -1;
}

/* Event loop over devices: the one free earliest decides next (ties: lowest id). A device
 * with nothing to run idles until its next known input arrives, or until an op run elsewhere
 * sends it an earlier one (inputs only come from other devices' ops; memory only changes
 * with the device's own). */
static gboolean
zbl_run(ZbList *z, PpsimSchedule *sched, GError **error)
{
    const PpsimTime never = G_MAXINT64;
    g_autofree PpsimTime *free_at = g_new0(PpsimTime, z->p);
    g_autofree PpsimTime *idle_since = g_new(PpsimTime, z->p); /* -1: not idle */
    g_autofree int *left = g_new(int, z->p);                   /* ops still to place */
    for (int d = 0; d < z->p; d++) {
        left[d] = 3 * z->m * (z->stages[d][1] >= 0 ? 2 : 1);
        idle_since[d] = -1;
    }
    for (;;) {
        int d = -1;
        for (int e = 0; e < z->p; e++)
            if (left[e] > 0 && (d < 0 || free_at[e] < free_at[d]))
                d = e;
        if (d < 0)
            return TRUE;
        if (free_at[d] == never) {
            g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                        "memory_limit is too small to make progress");
            return FALSE;
        }
        int s = -1;
        PpsimTime wake, end, arrival = 0;
        int kind = zbl_pick(z, d, free_at[d], &s, &wake);
        if (kind < 0) {
            idle_since[d] = free_at[d];
            free_at[d] = wake >= 0 ? wake : never;
            continue;
        }
        zbl_execute(z, sched, d, kind, s, free_at[d], &end);
        free_at[d] = end;
        idle_since[d] = -1;
        left[d]--;
        int to = zbl_receiver(z, kind, s, &arrival);
        if (to >= 0 && to != d && idle_since[to] >= 0 && arrival < free_at[to])
            free_at[to] = MAX(arrival, idle_since[to]);
    }
}

gboolean
ppsim_zb_list_schedule(PpsimSchedule *sched, int m, const PpsimCostEstimates *costs,
                       const gint64 *limit, GError **error)
{
    int p = sched->n_devices, S = sched->n_stages;
    ZbList z = {.p = p, .m = m, .S = S, .c = costs, .sched = sched};
    z.stages = g_malloc_n(p, sizeof(int[2]));
    for (int d = 0; d < p; d++)
        z.stages[d][0] = z.stages[d][1] = -1;
    for (int s = S - 1; s >= 0; s--) { /* later stage first */
        int d = sched->stage_device[s];
        z.stages[d][z.stages[d][0] < 0 ? 0 : 1] = s;
    }
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
    z.limit = g_memdup2(limit, p * sizeof(gint64));
    for (int d = 0; d < p; d++)
        z.pending_w[d] = g_queue_new();
    gboolean ok = zbl_run(&z, sched, error);
    for (int d = 0; d < p; d++)
        g_queue_free(z.pending_w[d]);
    g_free(z.pending_w);
    g_free(z.f_ready);
    g_free(z.b_ready);
    g_free(z.next_f);
    g_free(z.next_b);
    g_free(z.mem);
    g_free(z.limit);
    g_free(z.stages);
    return ok;
}
