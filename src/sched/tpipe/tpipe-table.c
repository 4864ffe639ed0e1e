/* tpipe-table.c: TPipe's periodic timetables; see tpipe.h. */
#include "sched/tpipe/tpipe.h"
#include "util/ppsim-error.h"

#include <stdlib.h>
#include <string.h>

static int
ceil_div(int a, int b)
{
    /* b > 0; rounds towards +infinity for negative a too */
    return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

static PpsimTpipeTable *
table_new(int p, int period, int n_slots)
{
    PpsimTpipeTable *t = g_new0(PpsimTpipeTable, 1);
    t->p = p;
    t->period = period;
    t->n_slots = n_slots;
    t->slot = g_new0(PpsimTpipeSlot, (gsize)p * n_slots);
    return t;
}

static void
table_set(PpsimTpipeTable *t, int d, int i, int time, PpsimOpKind kind, int stage)
{
    t->slot[d * t->n_slots + i] = (PpsimTpipeSlot){.t = time, .kind = kind, .stage = stage};
}

/* [TP] App. A. The forward of chunk 1 runs through devices 0..p-1 without a gap; chunk 2's
 * forward starts on device 0 T_fwd_interval = 3 + 6 kf - p after chunk 1's ends, then runs
 * without a gap; the backward of chunk 2 starts as soon as its forward ends (the advanced
 * backward) and chunk 1's starts T_bwd_interval = 3 + 6 kb - 2p after chunk 2's ends on
 * device 0. Relative to its F1, every device then runs F1 [0,1), a backward [1,3), F2 [3,4)
 * and the other backward [4,6): B2 and B1 sit 3p + 1 - 3d and 3p + 4 - 3d after F1, which
 * differ by 3, and 3p - 3d is 0 or 3 mod 6, so the slots never collide. */
PpsimTpipeTable *
ppsim_tpipe_table_plain(int p)
{
    int kf = ceil_div(p - 3, 6), kb = ceil_div(2 * p - 3, 6);
    PpsimTpipeTable *t = table_new(p, 6, 4);
    for (int d = 0; d < p; d++) {
        table_set(t, d, 0, d, PPSIM_OP_F, d);
        table_set(t, d, 1, 6 * kf + 3 + d, PPSIM_OP_F, p + d);
        table_set(t, d, 2, 6 * kf + 3 * p + 1 - 2 * d, PPSIM_OP_BW, p + d);
        table_set(t, d, 3, 6 * (kf + kb) + 3 * p + 4 - 2 * d, PPSIM_OP_BW, d);
    }
    return t;
}

/* Residues mod 7 covered by [t, t + len), as a bit mask. */
static unsigned
ring_mask(int t, int len)
{
    unsigned m = 0;
    for (int k = 0; k < len; k++)
        m |= 1u << (((t + k) % 7 + 7) % 7);
    return m;
}

typedef struct {
    int *f1, *f2, *b2, *b1, *r; /* [p] each, microbatch 0 */
} RecompTimes;

/* One candidate: chunk 2's backward starts on device p-1 at @x and runs to device 0 without
 * a gap; chunk 1's starts @gap after it ends and runs without a gap too ([TP] App. C: the
 * cool-down is the 4p of the uninterrupted backward). The forwards of both chunks take, on
 * each device, the first slot mod 7 left free (the forward intervals of App. B-C), and R
 * the one slot left, which must lie after the previous microbatch's B1 ended (one buffer)
 * and before B1. FALSE when the candidate does not fit. */
static gboolean
recomp_try(int p, int x, int gap, RecompTimes *rt)
{
    const int T = 7;
    for (int d = 0; d < p; d++) {
        rt->b2[d] = x + 2 * (p - 1 - d);
        rt->b1[d] = rt->b2[0] + 2 + gap + 2 * (p - 1 - d);
        if (ring_mask(rt->b2[d], 2) & ring_mask(rt->b1[d], 2))
            return FALSE;
    }
    for (int d = 0; d < p; d++) {
        unsigned busy = ring_mask(rt->b2[d], 2) | ring_mask(rt->b1[d], 2);
        int t = d == 0 ? 0 : rt->f1[d - 1] + 1, tries = 0;
        while ((ring_mask(t, 1) & busy) && tries++ < T)
            t++;
        rt->f1[d] = t;
    }
    for (int d = 0; d < p; d++) {
        unsigned busy = ring_mask(rt->b2[d], 2) | ring_mask(rt->b1[d], 2) | ring_mask(rt->f1[d], 1);
        int t = d == 0 ? rt->f1[p - 1] + 1 : rt->f2[d - 1] + 1, tries = 0;
        while ((ring_mask(t, 1) & busy) && tries++ < T)
            t++;
        rt->f2[d] = t;
    }
    if (rt->f2[p - 1] + 1 > rt->b2[p - 1])
        return FALSE;
    for (int d = 0; d < p; d++) {
        unsigned busy = ring_mask(rt->b2[d], 2) | ring_mask(rt->b1[d], 2) |
                        ring_mask(rt->f1[d], 1) | ring_mask(rt->f2[d], 1);
        rt->r[d] = -1;
        for (int r = rt->b1[d] - (T - 2); r < rt->b1[d] && rt->r[d] < 0; r++)
            if (!(ring_mask(r, 1) & busy) && r >= rt->f1[d] + 1)
                rt->r[d] = r;
        if (rt->r[d] < 0)
            return FALSE;
    }
    return TRUE;
}

static int
floor_div7(int a)
{
    return a >= 0 ? a / 7 : -((-a + 6) / 7);
}

/* Blocks device @d holds at its steady-state peak: chunk 2's activations from F2's start to
 * B2's end, chunk 1's recompute buffer from R's start to B1's end, and chunk 1's
 * activation while F1 runs (ppsim's memory rules: F allocates at its start and keeps only the
 * checkpoint). Microbatch j's copy of [a, b) covers t iff a + 7j <= t < b + 7j. */
static int
recomp_peak(const RecompTimes *rt, int d)
{
    int iv[3][2] = {
        {rt->f2[d], rt->b2[d] + 2}, {rt->r[d], rt->b1[d] + 2}, {rt->f1[d], rt->f1[d] + 1}};
    int peak = 0;
    for (int t = 0; t < 7; t++) {
        int n = 0;
        for (int k = 0; k < 3; k++)
            n += floor_div7(t - iv[k][0]) - floor_div7(t - iv[k][1]);
        peak = MAX(peak, n);
    }
    return peak;
}

/* [TP] App. B-C do not give the slots of Fig. 6(d) in closed form, so the timetable is
 * found: over every start of chunk 2's backward and gap before chunk 1's, keep the
 * candidate with the lowest steady-state peak on device 0 (T-Recomp's aim), then on the
 * worst device, then the shortest microbatch latency, then the earliest start. 14(2p + 15)
 * candidates of O(p) each (the whole p = 64, m = 256 run takes about 40 ms). */
PpsimTpipeTable *
ppsim_tpipe_table_recomp(int p, GError **error)
{
    g_autofree int *buf = g_new(int, 10 * (gsize)p);
    RecompTimes rt = {buf, buf + p, buf + 2 * p, buf + 3 * p, buf + 4 * p};
    RecompTimes best = {buf + 5 * p, buf + 6 * p, buf + 7 * p, buf + 8 * p, buf + 9 * p};
    int best_key[3] = {G_MAXINT, G_MAXINT, G_MAXINT};
    for (int x = 2 * p - 1; x < 4 * p + 14; x++)
        for (int gap = 0; gap < 14; gap++) {
            if (!recomp_try(p, x, gap, &rt))
                continue;
            int worst = 0;
            for (int d = 0; d < p; d++)
                worst = MAX(worst, recomp_peak(&rt, d));
            int key[3] = {recomp_peak(&rt, 0), worst, rt.b1[0] + 2 - rt.f1[0]};
            if (memcmp(key, best_key, sizeof key) != 0 &&
                (key[0] < best_key[0] || (key[0] == best_key[0] && key[1] < best_key[1]) ||
                 (key[0] == best_key[0] && key[1] == best_key[1] && key[2] < best_key[2]))) {
                memcpy(best_key, key, sizeof key);
                memcpy(buf + 5 * (gsize)p, buf, 5 * (gsize)p * sizeof(int));
            }
        }
    if (best_key[0] == G_MAXINT) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "option 'recompute': no T-Recomp timetable with period 7 found for p = %d", p);
        return NULL;
    }
    PpsimTpipeTable *t = table_new(p, 7, 5);
    for (int d = 0; d < p; d++) {
        table_set(t, d, 0, best.f1[d], PPSIM_OP_F, d);
        table_set(t, d, 1, best.f2[d], PPSIM_OP_F, p + d);
        table_set(t, d, 2, best.b2[d], PPSIM_OP_BW, p + d);
        table_set(t, d, 3, best.r[d], PPSIM_OP_R, d);
        table_set(t, d, 4, best.b1[d], PPSIM_OP_BW, d);
    }
    return t;
}

/* Slot of time @t in device @d's round: device d runs round slot s at times t with
 * (t + 2d) mod 7 = s, so its round starts 2 T_unit before device d-1's. */
static int
round_slot(int t, int d)
{
    return ((t + 2 * d) % 7 + 7) % 7;
}

enum { SLOT_B2 = 0, SLOT_FA = 2, SLOT_R = 3, SLOT_B1 = 4, SLOT_FB = 6 };

static int
next_forward_slot(int t, int d, int taken)
{
    while ((round_slot(t, d) != SLOT_FA && round_slot(t, d) != SLOT_FB) ||
           round_slot(t, d) == taken)
        t++;
    return t;
}

/* [TP] App. C's rounds. Every device repeats B2 B2 F R B1 B1 F (slots 0-6), shifted by
 * 2 T_unit per device: a fused backward handed from device d to d-1 then starts in the same
 * slot of d-1's round, so each backward runs through the devices without a gap. A forward
 * handed on moves 3 slots: from slot 6 it lands on slot 2 at once, from slot 2 it waits
 * one T_unit for slot 6, so a forward alternates the two slots down the devices. Chunk 1
 * starts on device 0 in slot 6 for even p, slot 2 for odd p, and chunk 2 takes the other
 * forward slot of each device: chunk 2's forward then has App. C's ceil((p-1)/2) intervals
 * and reaches device p-1 in slot 6, ending where B2's slot begins: its backward starts as soon as
 * its forward ends (the advanced backward; Eq. 4 counts it so). Chunk 2's forward starts after
 * chunk 1's has left device p-1 (App. B's delay rounds come out of the slot search), B1
 * in the first slot 4 of device p-1 after B2 has left device 0, and R in slot 3, just
 * before its B1 and after the previous microbatch's B1 (one recompute buffer). */
PpsimTpipeTable *
ppsim_tpipe_table_recomp_paper(int p)
{
    PpsimTpipeTable *tab = table_new(p, 7, 5);
    int t = p % 2 == 0 ? SLOT_FB : SLOT_FA, f1_end = 0, f2_end = 0;
    for (int d = 0; d < p; d++) {
        t = next_forward_slot(d == 0 ? t : f1_end, d, -1);
        table_set(tab, d, 0, t, PPSIM_OP_F, d);
        f1_end = t + 1;
    }
    f2_end = f1_end;
    for (int d = 0; d < p; d++) {
        t = next_forward_slot(f2_end, d, round_slot(tab->slot[d * 5].t, d));
        table_set(tab, d, 1, t, PPSIM_OP_F, p + d);
        f2_end = t + 1;
    }
    int b2 = f2_end;
    while (round_slot(b2, p - 1) != SLOT_B2)
        b2++;
    int b1 = b2 + 2 * p;
    while (round_slot(b1, p - 1) != SLOT_B1)
        b1++;
    for (int d = 0; d < p; d++) {
        table_set(tab, d, 2, b2 + 2 * (p - 1 - d), PPSIM_OP_BW, p + d);
        table_set(tab, d, 3, b1 + 2 * (p - 1 - d) - 1, PPSIM_OP_R, d);
        table_set(tab, d, 4, b1 + 2 * (p - 1 - d), PPSIM_OP_BW, d);
        g_assert(round_slot(b1 + 2 * (p - 1 - d) - 1, d) == SLOT_R);
    }
    return tab;
}

void
ppsim_tpipe_table_free(PpsimTpipeTable *table)
{
    if (table == NULL)
        return;
    g_free(table->slot);
    g_free(table);
}

typedef struct {
    gint64 t;
    PpsimOp op;
} TimedOp;

static int
timed_cmp(const void *a, const void *b)
{
    const TimedOp *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t; /* a device's times are distinct */
}

void
ppsim_tpipe_table_emit(const PpsimTpipeTable *table, int d, int m, PpsimSchedule *sched)
{
    int n = table->n_slots;
    g_autofree TimedOp *ops = g_new(TimedOp, (gsize)m * n);
    for (int j = 0; j < m; j++)
        for (int i = 0; i < n; i++) {
            const PpsimTpipeSlot *s = &table->slot[d * n + i];
            ops[j * n + i] = (TimedOp){
                .t = s->t + (gint64)table->period * j,
                .op = {.kind = s->kind, .stage = s->stage, .microbatch = j},
            };
        }
    qsort(ops, (gsize)m * n, sizeof(TimedOp), timed_cmp);
    for (gsize k = 0; k < (gsize)m * n; k++)
        ppsim_schedule_push_op(sched, d, ops[k].op);
}
