/* v-block.c: the building blocks of [CM] (Qi et al., "Pipeline Parallelism with
 * Controllable Memory", §3, Table 1) as unit-time plans, squeezed under a memory cap; they
 * serve v-sched.c as templates for V-Half and V-Min.
 *
 * A block fixes, for one microbatch, the slot of each of a device's four passes in a period
 * of 6 (one pass per slot, T_F = T_B = T_W); microbatch j runs 6j slots after microbatch 0.
 * V-Min, offsets (1, 1): device d runs F(d) at slot d, F(2p-1-d) at 2p-1-d, B(2p-1-d) at
 * 2p+g+d and B(d) at 4p+g-1-d: lifespans ~4p slots per microbatch, so ~4p/6 chunks (p/3 M_B)
 * live ([CM] Eq. 1). V-Half, offsets (2, 1): F(d) at 2d, F(2p-1-d) at 3p-2-d, B(2p-1-d) at
 * 3p-1+g+2d, B(d) at 6p-2+g-d: ~6p slots, p/2 M_B. g is the smallest gap that puts a
 * device's four passes in distinct slots mod 6 (g = 2 for V-Min when 3 | p and g = 3 for
 * V-Half when p is even, as in the reference implementation, sail-sg/zero-bubble-pipeline-
 * parallelism zbv_greedy.py); the two free slots of each period take the W passes. The
 * repeated block idles through its warm-up and cool-down; a left compaction in unit time
 * under the cap removes most of that (vs_slots_compact). Derived from the offsets; the
 * reference was read, not copied.
 */
#include "sched/vshape/v-sched.h"

#include <string.h>

static void
vs_raw_offsets(PpsimVShapeKind kind, int p, int d, int g, int o[4])
{
    if (kind == PPSIM_VSHAPE_MIN) {
        o[0] = d, o[1] = 2 * p - 1 - d, o[2] = 2 * p + g + d, o[3] = 4 * p + g - 1 - d;
    } else {
        o[0] = 2 * d, o[1] = 3 * p - 2 - d, o[2] = 3 * p - 1 + g + 2 * d, o[3] = 6 * p - 2 + g - d;
    }
}

void
ppsim_vshape_block_offsets(PpsimVShapeKind kind, int p, int d, int out[4])
{
    g_return_if_fail(kind != PPSIM_VSHAPE_ZB);
    for (int g = 0; g < 6; g++) {
        gboolean ok = TRUE;
        for (int e = 0; ok && e < p; e++) {
            int o[4], used = 0;
            vs_raw_offsets(kind, p, e, g, o);
            for (int i = 0; i < 4; i++) {
                ok &= !(used & (1 << (o[i] % 6)));
                used |= 1 << (o[i] % 6);
            }
        }
        if (ok) {
            vs_raw_offsets(kind, p, d, g, out);
            return;
        }
    }
    g_assert_not_reached(); /* g = 0..5 always covers one: see the tests */
}

/* A unit-time plan: every F, B and W in a slot of its device's timeline (one pass per slot).
 * Op id = 3 (stage m + microbatch) + kind, kind 0 F, 1 B, 2 W. */
typedef struct {
    int p, m, S, L;
    int *slot;        /* [3 S m] */
    int *occ;         /* [p L] op id in a device's slot, or -1 */
    gboolean w_later; /* W placement: the second chunk's oldest first (else the oldest) */
} VsSlots;

static void
vs_slots_free(VsSlots *v)
{
    g_free(v->slot);
    g_free(v->occ);
    g_free(v);
}

static int
vs_slots_device(const VsSlots *v, int id)
{
    int s = id / 3 / v->m;
    return s < v->p ? s : v->S - 1 - s;
}

static void
vs_slots_index(VsSlots *v)
{
    g_free(v->occ);
    v->occ = g_new(int, v->p * v->L);
    for (int x = 0; x < v->p * v->L; x++)
        v->occ[x] = -1;
    for (int id = 0; id < 3 * v->S * v->m; id++)
        if (v->slot[id] >= 0)
            v->occ[vs_slots_device(v, id) * v->L + v->slot[id]] = id;
}

/* The state of a walk of a device's slots (vs_slots_walk_w) before some slot: the memory,
 * the peak so far, and the W passes queued in B order (keys; -1 once run; the first @head
 * have all run). */
typedef struct {
    gint64 mem, peak;
    int n, head;
    int *wq; /* [2 m] */
} VsWalk;

/* Slot @x of device @d in a walk: F allocates act, B frees act - act_w and queues its W; a
 * slot free of F and B runs a queued W, which frees the rest: the oldest, or with v->w_later
 * the second chunk's oldest first (as the reference implementation puts W). With @place,
 * records that W's slot. */
static inline void
vs_walk_step(VsSlots *v, const PpsimCostEstimates *c, int d, int x, VsWalk *w, gboolean place)
{
    int m = v->m, id = v->occ[d * v->L + x];
    if (id >= 0 && id % 3 < 2) {
        const PpsimStageEstimate *st = &c->stage[id / 3 / m];
        if (id % 3 == 0) {
            w->mem += st->act;
            w->peak = MAX(w->peak, w->mem);
        } else {
            w->mem -= st->act - st->act_w;
            w->wq[w->n++] = id / 3;
        }
        return;
    }
    while (w->head < w->n && w->wq[w->head] < 0)
        w->head++;
    if (w->head == w->n)
        return;
    int pick = w->head;
    for (int i = w->head; v->w_later && i < w->n; i++)
        if (w->wq[i] >= 0 && w->wq[i] / m >= v->p) {
            pick = i;
            break;
        }
    w->mem -= c->stage[w->wq[pick] / m].act_w;
    if (place)
        v->slot[3 * w->wq[pick] + 2] = x;
    w->wq[pick] = -1;
}

/* Walks device @d's slots with its W passes floating (vs_walk_step); with @place, records
 * the W slots. Returns the peak. */
static gint64
vs_slots_walk_w(VsSlots *v, const PpsimCostEstimates *c, int d, gboolean place)
{
    g_autofree int *wq = g_new(int, 2 * v->m);
    VsWalk w = {.wq = wq};
    for (int x = 0; x < v->L; x++)
        vs_walk_step(v, c, d, x, &w, place);
    return w.peak;
}

/* Puts every W in the free slot vs_slots_walk_w gives it. */
static void
vs_slots_place_w(VsSlots *v, const PpsimCostEstimates *c)
{
    for (int x = 0; x < v->p * v->L; x++)
        if (v->occ[x] >= 0 && v->occ[x] % 3 == 2)
            v->occ[x] = -1;
    for (int d = 0; d < v->p; d++)
        vs_slots_walk_w(v, c, d, TRUE);
    vs_slots_index(v);
}

/* The building block of @kind repeated for m microbatches (microbatch j 6j slots later), W
 * in the free slots. */
static VsSlots *
vs_slots_block(PpsimVShapeKind kind, int p, int m, gboolean w_later, const PpsimCostEstimates *c)
{
    VsSlots *v = g_new0(VsSlots, 1);
    v->p = p, v->m = m, v->S = 2 * p, v->w_later = w_later;
    v->slot = g_new(int, 3 * v->S * m);
    int L = 0;
    for (int d = 0; d < p; d++) {
        int o[4], stage[4] = {d, v->S - 1 - d, v->S - 1 - d, d};
        ppsim_vshape_block_offsets(kind, p, d, o);
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < m; j++) {
                v->slot[3 * (stage[i] * m + j) + (i >= 2)] = o[i] + 6 * j;
                L = MAX(L, o[i] + 6 * j + 1);
            }
    }
    v->L = L + 2 * m + 1; /* room for the trailing W */
    for (int id = 2; id < 3 * v->S * m; id += 3)
        v->slot[id] = -1; /* not yet placed */
    vs_slots_index(v);
    vs_slots_place_w(v, c);
    return v;
}

/* Peak activation of device @d's plan: F allocates act, B frees act - act_w, W the rest. */
static gint64
vs_slots_peak(const VsSlots *v, const PpsimCostEstimates *c, int d)
{
    gint64 mem = 0, peak = 0;
    for (int x = 0; x < v->L; x++) {
        int id = v->occ[d * v->L + x];
        if (id < 0)
            continue;
        const PpsimStageEstimate *st = &c->stage[id / 3 / v->m];
        mem += id % 3 == 0 ? st->act : id % 3 == 1 ? -(st->act - st->act_w) : -st->act_w;
        peak = MAX(peak, mem);
    }
    return peak;
}

/* Pass 1 of vs_slots_compact for op @id of device @d: moves it to the first free slot after
 * @dep (and before its own) where the device's peak (vs_slots_peak) stays within @cap, as
 * trying each slot with a full walk would, in one walk: moving an op of memory effect delta
 * from slot cur to x < cur adds delta to the memory at every slot in [x, cur) and changes
 * nothing else, and the curve is within @cap before the move, so the move keeps the peak
 * within @cap iff delta <= 0 or max(memory before x, memory after each op in (x, cur)) +
 * delta <= @cap. @after: device @d's memory after each of its slots (an op's, or carried
 * over), kept up to date here; @suffix: scratch of L. */
static void
vs_slots_move_within(VsSlots *v, const PpsimCostEstimates *c, int d, int id, int dep, gint64 cap,
                     gint64 *after, gint64 *suffix)
{
    int *row = v->occ + d * v->L, cur = v->slot[id];
    if (dep + 1 >= cur)
        return;
    const PpsimStageEstimate *st = &c->stage[id / 3 / v->m];
    gint64 delta = id % 3 == 0 ? st->act : id % 3 == 1 ? -(st->act - st->act_w) : -st->act_w;
    gint64 hi = G_MININT64; /* max of after[] over the op slots in (x, cur) */
    for (int x = cur - 1; x > dep; x--) {
        suffix[x] = hi;
        if (row[x] >= 0)
            hi = MAX(hi, after[x]);
    }
    for (int x = dep + 1; x < cur; x++) {
        if (row[x] >= 0)
            continue;
        gint64 before = x > 0 ? after[x - 1] : 0;
        if (delta <= 0 || MAX(before, suffix[x]) + delta <= cap) {
            row[x] = id, row[cur] = -1, v->slot[id] = x;
            for (int y = x; y < cur; y++)
                after[y] += delta;
            return;
        }
    }
}

/* Fills @after[L] with device @d's memory after each slot (vs_slots_move_within). */
static void
vs_slots_levels(const VsSlots *v, const PpsimCostEstimates *c, int d, gint64 *after)
{
    const int *row = v->occ + d * v->L;
    gint64 level = 0;
    for (int x = 0; x < v->L; x++) {
        int o = row[x];
        if (o >= 0) {
            const PpsimStageEstimate *so = &c->stage[o / 3 / v->m];
            level += o % 3 == 0 ? so->act : o % 3 == 1 ? -(so->act - so->act_w) : -so->act_w;
        }
        after[x] = level;
    }
}

/* Left compaction ([CM] §3 "squeeze", done in two passes as the reference implementation
 * does): in the order of their slots, an op moves to the earliest free slot after its
 * dependencies (F: the previous stage's F; B: the next stage's B and its own F; W: its B;
 * each after the previous microbatch's same op on the stage) where the device's peak stays
 * within max(@limit, its current peak). Pass 1 moves F, B and W of the warm-up (before stage
 * 0's first B) and of the cool-down (after stage 0's last F); pass 2 lets W float (each in the
 * first free slot, vs_slots_walk_w) and moves the cool-down's F and B again. The steady state
 * is already tight and stays. */
static void
vs_slots_compact(VsSlots *v, const PpsimCostEstimates *c, const gint64 *limit, int pass)
{
    int m = v->m, S = v->S, n = 3 * S * m, k = 0;
    g_autofree int *order = g_new(int, n);
    g_autofree gint64 *cap = g_new(gint64, v->p);
    /* pass 1: each device's memory after each slot, and scratch (vs_slots_move_within) */
    g_autofree gint64 *levels = g_new(gint64, pass == 1 ? (gsize)v->p * v->L : 1);
    g_autofree gint64 *suffix = g_new(gint64, v->L);
    for (int d = 0; pass == 1 && d < v->p; d++)
        vs_slots_levels(v, c, d, levels + (gsize)d * v->L);
    g_autofree int *wq_pre = g_new(int, 2 * m), *wq_try = g_new(int, 2 * m); /* of pass 2 */
    /* pass 2: per device, a walk saved before slot ck_at (its queue in ck_wq) */
    g_autofree VsWalk *ck = g_new0(VsWalk, v->p);
    g_autofree int *ck_at = g_new0(int, v->p);
    g_autofree int *ck_wq = g_new(int, pass == 2 ? (gsize)v->p * 2 * m : 1);
    g_autofree int *last = g_new(int, v->p); /* each device's last F or B slot (ops only move
                                              * earlier, so it stays an upper bound) */
    for (int d = 0; d < v->p; d++) {
        last[d] = -1;
        for (int x = 0; x < v->L; x++)
            if (v->occ[d * v->L + x] >= 0 && v->occ[d * v->L + x] % 3 < 2)
                last[d] = x;
    }
    for (int d = 0; d < v->p; d++)
        cap[d] =
            MAX(limit[d], pass == 1 ? vs_slots_peak(v, c, d) : vs_slots_walk_w(v, c, d, FALSE));
    for (int x = 0; x < v->L; x++) /* ops by slot, ties by device */
        for (int d = 0; d < v->p; d++) {
            int id = v->occ[d * v->L + x];
            if (id >= 0 && (pass == 1 || id % 3 < 2))
                order[k++] = id;
        }
    n = k;
    int phase = 0;
    for (k = 0; k < n; k++) {
        int id = order[k], key = id / 3, s = key / m, j = key % m, kind = id % 3;
        int d = vs_slots_device(v, id), dep = -1;
        if (phase == 0 && id == 1)
            phase = 1; /* the first B of stage 0: the steady state begins */
        if (phase == 1 && id == 3 * (m - 1)) {
            phase = 2; /* the last F of stage 0: the cool-down begins */
            continue;
        }
        if (phase == 1 || (phase == 0 && pass == 2))
            continue;
        if (kind == 0 && s > 0)
            dep = MAX(dep, v->slot[3 * (key - m)]);
        if (kind == 1 && s + 1 < S)
            dep = MAX(dep, v->slot[3 * (key + m) + 1]);
        if (kind > 0)
            dep = MAX(dep, v->slot[id - 1]);
        if (j > 0)
            dep = MAX(dep, v->slot[id - 3]);
        int *row = v->occ + d * v->L, cur = v->slot[id];
        if (pass == 1) {
            vs_slots_move_within(v, c, d, id, dep, cap[d], levels + (gsize)d * v->L, suffix);
            continue;
        }
        /* the first free slot after dep where the device's walk stays within the cap: the
         * walk up to the slot tried does not change, so it is carried along (@pre) and only
         * the rest is walked again for each slot tried (as a full walk would give) */
        if (dep + 1 >= cur)
            continue;
        VsWalk pre = {.wq = wq_pre};
        int from = 0; /* resume from the device's saved walk when it is not past dep */
        if (ck_at[d] <= dep + 1) {
            pre = ck[d], pre.wq = wq_pre, from = ck_at[d];
            memcpy(wq_pre + pre.head, ck_wq + (gsize)d * 2 * m + pre.head,
                   (gsize)(pre.n - pre.head) * sizeof(int));
        }
        for (int x = from; x <= dep; x++)
            vs_walk_step(v, c, d, x, &pre, FALSE);
        int x = dep + 1;
        for (; x < cur; x++) {
            if (row[x] >= 0 && row[x] % 3 < 2) {
                vs_walk_step(v, c, d, x, &pre, FALSE);
                continue;
            }
            int was = row[x];
            row[x] = id, row[cur] = -1, v->slot[id] = x;
            VsWalk w = pre;
            w.wq = wq_try;
            memcpy(wq_try + pre.head, pre.wq + pre.head, (gsize)(pre.n - pre.head) * sizeof(int));
            /* after the last F or B memory only falls; past the cap the slot is refused */
            for (int y = x; y <= last[d] && w.peak <= cap[d]; y++)
                vs_walk_step(v, c, d, y, &w, FALSE);
            if (w.peak <= cap[d])
                break;
            row[cur] = id, row[x] = was, v->slot[id] = cur;
            vs_walk_step(v, c, d, x, &pre, FALSE);
        }
        /* @pre is the walk before slot x, which later moves on this device leave alone as
         * long as they land after it (checked above) */
        ck[d] = pre, ck_at[d] = x;
        memcpy(ck_wq + (gsize)d * 2 * m + pre.head, wq_pre + pre.head,
               (gsize)(pre.n - pre.head) * sizeof(int));
    }
}

/* The plan as per-device op lists, in slot order. */
static PpsimSchedule *
vs_slots_schedule(const VsSlots *v)
{
    PpsimSchedule *t = ppsim_schedule_new(v->p, v->S, v->m);
    ppsim_schedule_map_vshape(t);
    for (int d = 0; d < v->p; d++)
        for (int x = 0; x < v->L; x++) {
            int id = v->occ[d * v->L + x];
            if (id >= 0)
                ppsim_schedule_push(t, d,
                                    (PpsimOpKind[]){PPSIM_OP_F, PPSIM_OP_B, PPSIM_OP_W}[id % 3],
                                    id / 3 / v->m, id / 3 % v->m);
        }
    return t;
}

void
ppsim_vshape_block_templates(PpsimVShapeKind kind, int p, int m, const PpsimCostEstimates *costs,
                             const gint64 *limit, int group, GPtrArray *out)
{
    int S = 2 * p;
    /* plans under the real memory model and under a conservative one where W holds
     * everything until it ends (the reference implementation's): the latter never exceeds
     * the cap either, as act_w <= act */
    g_autofree PpsimStageEstimate *hold_st = g_memdup2(costs->stage, S * sizeof(*hold_st));
    for (int s = 0; s < S; s++)
        hold_st[s].act_w = hold_st[s].act;
    PpsimCostEstimates hold = *costs;
    hold.stage = hold_st;
    for (int i = group; i <= group; i++) {
        const PpsimCostEstimates *mc = i < 2 ? costs : &hold;
        VsSlots *v = vs_slots_block(kind, p, m, i % 2, mc);
        if (i < 2)
            g_ptr_array_add(out, vs_slots_schedule(v));
        vs_slots_compact(v, mc, limit, 1);
        g_ptr_array_add(out, vs_slots_schedule(v));
        vs_slots_compact(v, mc, limit, 2);
        vs_slots_place_w(v, mc);
        g_ptr_array_add(out, vs_slots_schedule(v));
        vs_slots_free(v);
    }
}
