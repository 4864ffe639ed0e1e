/* uniform-repeat.c: the uniform repeating strategy ([PO] §2, [CM] §2.2); see
 * uniform-repeat.h. Works on the generator's cost estimates only. */
#include "sched/offload/uniform-repeat.h"
#include "util/ppsim-error.h"

#include <stdlib.h>

/* One pass of the building block. */
typedef struct {
    PpsimTime start, dur;
    int seq; /* placement order, which respects the dependencies */
    guint8 kind;
    gint32 stage;
} BlockPass;

/* Busy intervals of one device, as block-relative (start, length) pairs. */
typedef struct {
    GArray *busy; /* PpsimTime pairs: start, length */
} DeviceRing;

static PpsimTime
mod_time(PpsimTime t, PpsimTime T)
{
    PpsimTime r = t % T;
    return r < 0 ? r + T : r;
}

/* Earliest t >= @t0 where [t, t + @dur) meets none of @ring's intervals modulo @T; -1 when
 * no gap of that width exists. */
static PpsimTime
ring_earliest(const DeviceRing *ring, PpsimTime t0, PpsimTime dur, PpsimTime T)
{
    if (dur == 0)
        return t0;
    PpsimTime t = t0;
    while (t - t0 <= T) {
        PpsimTime x = mod_time(t, T), push = 0;
        for (guint i = 0; i + 1 < ring->busy->len && push == 0; i += 2) {
            const PpsimTime *iv = &g_array_index(ring->busy, PpsimTime, i);
            PpsimTime y = mod_time(iv[0], T);
            for (int k = -1; k <= 1; k++) { /* the interval's copies around [0, T) */
                PpsimTime a = y + k * T, b = a + iv[1];
                if (x < b && a < x + dur) {
                    push = b - x;
                    break;
                }
            }
        }
        if (push == 0)
            return t;
        t += push;
    }
    return -1;
}

static void
ring_take(DeviceRing *ring, PpsimTime start, PpsimTime dur)
{
    if (dur == 0)
        return;
    PpsimTime iv[2] = {start, dur};
    g_array_append_vals(ring->busy, iv, 2);
}

static PpsimTime
pass_duration(const PpsimStageEstimate *st, PpsimOpKind kind)
{
    return kind == PPSIM_OP_F ? st->f_ps : kind == PPSIM_OP_B ? st->b_ps : st->w_ps;
}

/* Builds the block at interval @T into @passes (3 S of them); FALSE when a pass finds no gap. */
static gboolean
block_build(const PpsimSchedule *sched, const PpsimCostEstimates *c, PpsimTime T, BlockPass *passes)
{
    int S = sched->n_stages, p = sched->n_devices, n = 0;
    DeviceRing *rings = g_new(DeviceRing, p);
    for (int d = 0; d < p; d++)
        rings[d].busy = g_array_new(FALSE, FALSE, sizeof(PpsimTime));
    gboolean ok = TRUE;
    PpsimTime ready = 0; /* when the next pass's input is there */
    int prev_device = -1;
    for (int step = 0; step < 3 * S && ok; step++) {
        PpsimOpKind kind;
        int s;
        if (step < S) {
            kind = PPSIM_OP_F, s = step;
        } else {
            int k = step - S; /* B(S-1), W(S-1), B(S-2), W(S-2), ... */
            s = S - 1 - k / 2;
            kind = k % 2 == 0 ? PPSIM_OP_B : PPSIM_OP_W;
        }
        int d = sched->stage_device[s];
        PpsimTime t0 = ready;
        if (kind != PPSIM_OP_W && prev_device >= 0 && prev_device != d)
            t0 += c->comm_ps;
        if (kind == PPSIM_OP_W)
            t0 = passes[n - 1].start + passes[n - 1].dur; /* after its B */
        PpsimTime dur = pass_duration(&c->stage[s], kind);
        PpsimTime t = ring_earliest(&rings[d], t0, dur, T);
        if (t < 0) {
            ok = FALSE;
            break;
        }
        ring_take(&rings[d], t, dur);
        passes[n] = (BlockPass){.start = t, .dur = dur, .seq = n, .kind = kind, .stage = s};
        if (kind != PPSIM_OP_W) { /* the chain goes on from F and B, not from W */
            ready = t + dur;
            prev_device = d;
        }
        n++;
    }
    for (int d = 0; d < p; d++)
        g_array_free(rings[d].busy, TRUE);
    g_free(rings);
    return ok;
}

/* A pass of the block as seen by the repetition: microbatch j's copy starts at
 * (q + j) T + r, with 0 <= r < T. */
typedef struct {
    PpsimTime q, r;
    const BlockPass *pass;
} Phase;

/* Order within one round q + j: by r (the start), then microbatch (a larger q is an earlier
 * microbatch), then placement order. */
static int
phase_cmp(const void *a, const void *b)
{
    const Phase *x = a, *y = b;
    if (x->r != y->r)
        return x->r < y->r ? -1 : 1;
    if (x->q != y->q)
        return x->q > y->q ? -1 : 1;
    return x->pass->seq - y->pass->seq;
}

gboolean
ppsim_uniform_repeat_fill(PpsimSchedule *sched, const PpsimCostEstimates *costs, GError **error)
{
    int S = sched->n_stages, p = sched->n_devices, m = sched->n_microbatches;
    g_autofree PpsimTime *work = g_new0(PpsimTime, p);
    for (int s = 0; s < S; s++) {
        const PpsimStageEstimate *st = &costs->stage[s];
        work[sched->stage_device[s]] += st->f_ps + st->b_ps + st->w_ps;
    }
    PpsimTime T0 = 1;
    for (int d = 0; d < p; d++)
        T0 = MAX(T0, work[d]);
    g_autofree BlockPass *passes = g_new(BlockPass, 3 * S);
    PpsimTime T = T0;
    int tries = 0;
    while (!block_build(sched, costs, T, passes)) {
        if (++tries > 64 * 8) {
            g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                        "no collision-free building block up to an interval of 9x the "
                        "busiest device's work");
            return FALSE;
        }
        T += MAX(1, T0 / 64);
    }
    /* each device's passes of all microbatches, in nominal order (start time, then
     * microbatch, then placement order): the starts of one pass form an arithmetic sequence
     * of period T, so walking the rounds q + j in order and, within one, the passes by their
     * phase r merges them in time linear in their number */
    g_autofree Phase *ph = g_new(Phase, 3 * S);
    for (int d = 0; d < p; d++) {
        int k = 0;
        for (int i = 0; i < 3 * S; i++) {
            if (sched->stage_device[passes[i].stage] != d)
                continue;
            PpsimTime r = mod_time(passes[i].start, T);
            ph[k++] = (Phase){(passes[i].start - r) / T, r, &passes[i]};
        }
        if (k == 0)
            continue;
        qsort(ph, (gsize)k, sizeof(Phase), phase_cmp);
        PpsimTime qmin = ph[0].q, qmax = ph[0].q;
        for (int i = 1; i < k; i++)
            qmin = MIN(qmin, ph[i].q), qmax = MAX(qmax, ph[i].q);
        for (PpsimTime round = qmin; round < qmax + m; round++)
            for (int i = 0; i < k; i++) {
                PpsimTime j = round - ph[i].q;
                if (j >= 0 && j < m)
                    ppsim_schedule_push(sched, d, ph[i].pass->kind, ph[i].pass->stage, (int)j);
            }
    }
    return TRUE;
}
