/* v-run.c: one candidate V-shape schedule (v-sched.c), simulated on the generator's cost
 * estimates by an event loop with four ways of choosing a device's next op:
 *
 *   free      B first (earliest arrival, or one chunk's first), else a ready F that fits
 *             under the cap (the later stage first, so microbatches reach the loss early),
 *             else the oldest pending W (W fills what would be bubbles, [ZB] §3). With
 *             T_F = T_B = T_W this is ZB-V ([ZB] §6): the cap of 2p chunk activations stops
 *             the warm-up after 2p-1 forwards (the F of the first 1F-1B-1W group makes 2p),
 *             and with W holding memory after its B the cap then forces F, B, W in turn.
 *             "reserve": a first-chunk F also leaves room for one second-chunk F, so a low
 *             cap cannot fill a device with first chunks waiting for a loss that never comes;
 *             a warm-up reserve keeps room for a d + b second-chunk Fs on device d until its
 *             first one (as the reference implementation's ZB-V warm-up does). Variants: F,
 *             B, W in turn (the 1F-1B-1W groups), or B and F alternating with W only in the
 *             waits (vs_pick_alt), which copes better with p2p latency.
 *   template  forwards and backwards in a template's order (a [CM] building block, or a free
 *             run on uniform costs), each as soon as it is ready: B first, F if it fits, else
 *             W. With the cap at least the template's peak this cannot deadlock (every B the
 *             template ran before an F only needs earlier ops). Variant: until a device's
 *             first B, the other stage's next F may overtake if it leaves room for k copies of
 *             the one it overtakes (k = 1..min(p, 8) searched).
 *   strict    the template's order as is, as early as dependencies allow; its peak is the
 *             template's.
 *   slot      each stage in microbatch order, the two interleaved by template position.
 *
 * Deterministic.
 */
#include "sched/vshape/v-queue.h"
#include "sched/vshape/v-run.h"

#include <string.h>

typedef struct {
    int p, m, S, mode, bpref;
    gboolean reserve;
    int cycle, warm_a, warm_b;
    int *last;    /* [p] kind of the device's last op, -1 */
    int *last_fb; /* [p] kind of its last F or B, -1 */
    const PpsimCostEstimates *c;
    const gint64 *limit;
    const PpsimSchedule *tpl; /* template (VS_TEMPLATE, VS_STRICT) */
    PpsimSchedule *out;
    int (*stages)[2];             /* [p] later stage first */
    PpsimTime *f_ready, *b_ready; /* [S m] arrival of the op's input; -1 unknown */
    int *next_f, *next_b;         /* [S] next microbatch per stage (free mode) */
    int **fseq, **bseq;           /* [p] template F / B keys in order (template mode) */
    int *nf, *nb, *fpos, *bpos;   /* [p] */
    int *spos;                    /* [p] position in the template (strict mode) */
    int *f_slot, *b_slot;         /* [S m] the op's position in its device's template */
    gboolean *f_done;             /* [S m] */
    int *wq, *wq_head, *wq_tail;  /* [p][2m+1] pending W keys, a ring */
    gint64 *mem, *peak;           /* [p] */
    int *n_ops;                   /* [p] ops in out->compute[d] so far */
    /* [p] a device that found nothing to run finds nothing again, with the same wake-up,
     * until its own state or its stages' inputs change (@clean cleared) or the time reaches
     * the earliest input arrival it knows of (@recheck, -1 none) */
    gboolean *clean;
    PpsimTime *cwake, *recheck;
    PpsimTime makespan;
    PpsimTime idle;  /* sum over devices of end - first start - busy */
    PpsimTime bound; /* give up once the makespan exceeds it; 0 = never */
} VRun;

static int
vs_device(const VRun *r, int s)
{
    return s < r->p ? s : r->S - 1 - s;
}

static PpsimTime
vs_arrival(const VRun *r, int from, int to, PpsimTime end)
{
    return vs_device(r, from) == vs_device(r, to) ? end : end + r->c->comm_ps;
}

static gboolean
vs_fits(const VRun *r, int d, int s)
{
    gint64 need = r->c->stage[s].act;
    if (r->mode == VS_FREE && r->reserve && s == d) /* keep room for a second-chunk F */
        need += r->c->stage[r->S - 1 - d].act;
    if (r->mode == VS_FREE && s == d && r->next_f[r->S - 1 - d] == 0) /* warm-up reserve */
        need += (r->warm_a * d + r->warm_b) * r->c->stage[r->S - 1 - d].act;
    return r->mem[d] + need <= r->limit[d];
}

static void
vs_wake(PpsimTime *wake, PpsimTime at)
{
    if (at >= 0 && (*wake < 0 || at < *wake))
        *wake = at;
}

static int
vs_pop_w(VRun *r, int d, int *key)
{
    if (r->wq_head[d] == r->wq_tail[d])
        return -1;
    *key = r->wq[d * (2 * r->m + 1) + r->wq_head[d]];
    return PPSIM_OP_W;
}

/* Slot mode: each stage's ops in microbatch order, the two stages interleaved by template
 * position: the ready B earliest in the template, else the ready F earliest in it that fits
 * (an F that overtakes the other stage's next F, still to arrive, must leave room for it:
 * that one may lead to the loss), else the oldest W. */
static int
vs_pick_slot(VRun *r, int d, PpsimTime t, int *key, PpsimTime *wake)
{
    int m = r->m, best = -1;
    for (int i = 0; i < 2; i++) {
        int s = r->stages[d][i], j = r->next_b[s], k = s * m + j;
        if (j >= m || r->b_ready[k] < 0)
            continue;
        if (r->b_ready[k] > t)
            vs_wake(wake, r->b_ready[k]);
        else if (best < 0 || r->b_slot[k] < r->b_slot[best])
            best = k;
    }
    if (best >= 0) {
        *key = best;
        return PPSIM_OP_B;
    }
    for (int i = 0; i < 2; i++) {
        int s = r->stages[d][i], j = r->next_f[s], k = s * m + j;
        if (j >= m || r->f_ready[k] < 0 || r->f_ready[k] > t) {
            if (j < m && r->f_ready[k] > t)
                vs_wake(wake, r->f_ready[k]);
            continue;
        }
        int o = r->stages[d][1 - i], jo = r->next_f[o], ko = o * m + jo;
        gint64 need = r->c->stage[s].act;
        if (jo < m && r->f_slot[ko] < r->f_slot[k] && (r->f_ready[ko] < 0 || r->f_ready[ko] > t))
            need += r->c->stage[o].act;
        if (r->mem[d] + need <= r->limit[d] && (best < 0 || r->f_slot[k] < r->f_slot[best]))
            best = k;
    }
    if (best >= 0) {
        *key = best;
        return PPSIM_OP_F;
    }
    return vs_pop_w(r, d, key);
}

/* The op of @kind (B or F) device @d would run next in B-F alternation: the first whose
 * input is on its way (arrival time known). F: the later stage first. B: by the policy's
 * preference; "balance" takes the second chunk's B unless the device has run fewer first-
 * chunk Bs than second-chunk ones and the first chunk's next input is on its way; once no F
 * is left, the B whose input arrives first, the second chunk's (the longer chain ahead) if
 * both are there at @t. Returns the key and *@at its arrival, or -1. */
static int
vs_alt_choose(const VRun *r, int d, int kind, PpsimTime t, PpsimTime *at)
{
    int m = r->m, S = r->S, k = -1;
    *at = -1;
    if (kind == PPSIM_OP_B && r->bpref == VS_B_BALANCE) {
        int s0 = d, s1 = S - 1 - d;
        PpsimTime a0 = r->next_b[s0] < m ? r->b_ready[s0 * m + r->next_b[s0]] : -1;
        PpsimTime a1 = r->next_b[s1] < m ? r->b_ready[s1 * m + r->next_b[s1]] : -1;
        if (r->next_f[s0] >= m && r->next_f[s1] >= m && a0 >= 0 && a1 >= 0) {
            /* no F left: the one there first, the second chunk's (longer chain) on a tie or
             * when both are there */
            gboolean take1 = a1 <= MAX(a0, t);
            *at = take1 ? a1 : a0;
            return take1 ? s1 * m + r->next_b[s1] : s0 * m + r->next_b[s0];
        }
        if (r->next_b[s0] < r->next_b[s1] && a0 >= 0) {
            *at = a0;
            return s0 * m + r->next_b[s0];
        }
        if (a1 >= 0) {
            *at = a1;
            return s1 * m + r->next_b[s1];
        }
        return -1;
    }
    for (int i = 0; i < 2; i++) {
        int s = r->stages[d][kind == PPSIM_OP_B && r->bpref == VS_B_EARLIER ? 1 - i : i];
        int j = kind == PPSIM_OP_B ? r->next_b[s] : r->next_f[s];
        PpsimTime a = j >= m               ? -1
                      : kind == PPSIM_OP_B ? r->b_ready[s * m + j]
                                           : r->f_ready[s * m + j];
        if (a < 0)
            continue;
        if (k < 0 || (kind == PPSIM_OP_B && r->bpref == VS_B_EARLIEST && a < *at))
            k = s * m + j, *at = a;
        if (kind == PPSIM_OP_F || r->bpref != VS_B_EARLIEST)
            break;
    }
    return k;
}

/* Free mode with cycle >= 2, after the device's first B: B and F alternate (only B once no F
 * is left), each the op vs_alt_choose gives, waiting for it if need be; meanwhile a pending W
 * runs if it ends before the input arrives (cycles 2 and 4) or whenever the op must wait
 * (cycles 3 and 5). Cycles 4 and 5 skip an F turn whose input has not arrived yet. A reading
 * of the reference implementation's ZB-V greedy (rounds of B then F, W filling the waits).
 * An F that does not fit runs a W first. Returns -2 when this rule has nothing to say. */
static int
vs_pick_alt(VRun *r, int d, PpsimTime t, int *key, PpsimTime *wake)
{
    int m = r->m;
    PpsimTime rdy;
    gboolean has_w = r->wq_head[d] != r->wq_tail[d];
    gboolean cool = r->next_f[d] >= m && r->next_f[r->S - 1 - d] >= m;
    int turn = cool || r->last_fb[d] != PPSIM_OP_B ? PPSIM_OP_B : PPSIM_OP_F;
    int k = vs_alt_choose(r, d, turn, t, &rdy);
    if (turn == PPSIM_OP_F && r->cycle >= 4 && (k < 0 || rdy > t)) {
        turn = PPSIM_OP_B;
        k = vs_alt_choose(r, d, turn, t, &rdy);
    }
    if (k < 0)
        return -2;
    if (turn == PPSIM_OP_F && !vs_fits(r, d, k / m))
        return has_w ? vs_pop_w(r, d, key) : -2;
    if (rdy <= t) {
        *key = k;
        return turn;
    }
    if (has_w) {
        int wk = r->wq[d * (2 * m + 1) + r->wq_head[d]];
        if (r->cycle % 2 == 1 || t + r->c->stage[wk / m].w_ps <= rdy)
            return vs_pop_w(r, d, key);
    }
    vs_wake(wake, rdy);
    return -1;
}

/* Device @d's next op at time @t as (kind, key = stage m + microbatch), or -1 with *@wake
 * the next time one of its candidates' inputs arrives (-1: unknown). */
static int
vs_pick(VRun *r, int d, PpsimTime t, int *key, PpsimTime *wake)
{
    int m = r->m;
    *wake = -1;
    if (r->mode == VS_STRICT) {
        const PpsimOp *op = &g_array_index(r->tpl->compute[d], PpsimOp, r->spos[d]);
        int k = op->stage * m + op->microbatch;
        PpsimTime rdy = op->kind == PPSIM_OP_F   ? r->f_ready[k]
                        : op->kind == PPSIM_OP_B ? r->b_ready[k]
                                                 : t;
        if (rdy < 0 || rdy > t) {
            vs_wake(wake, rdy);
            return -1;
        }
        *key = k;
        return op->kind;
    }
    if (r->mode == VS_SLOT)
        return vs_pick_slot(r, d, t, key, wake);
    if (r->mode == VS_TEMPLATE) {
        if (r->bpos[d] < r->nb[d]) {
            int k = r->bseq[d][r->bpos[d]];
            if (r->b_ready[k] >= 0 && r->b_ready[k] <= t) {
                *key = k;
                return PPSIM_OP_B;
            }
            if (r->b_ready[k] > t)
                vs_wake(wake, r->b_ready[k]);
        }
        while (r->fpos[d] < r->nf[d] && r->f_done[r->fseq[d][r->fpos[d]]])
            r->fpos[d]++;
        if (r->fpos[d] < r->nf[d]) {
            int k = r->fseq[d][r->fpos[d]];
            if (r->f_ready[k] >= 0 && r->f_ready[k] <= t && vs_fits(r, d, k / m)) {
                *key = k;
                return PPSIM_OP_F;
            }
            if (r->f_ready[k] > t)
                vs_wake(wake, r->f_ready[k]);
            /* warm-up overtaking (policy "reserve" here): until the device's first B, the
             * other stage's next F may go first if it leaves room for the one it overtakes */
            for (int i = r->fpos[d] + 1; r->reserve && r->bpos[d] == 0 && i < r->nf[d]; i++) {
                int k2 = r->fseq[d][i];
                if (r->f_done[k2] || k2 / m == k / m)
                    continue;
                if (r->f_ready[k2] >= 0 && r->f_ready[k2] <= t &&
                    r->mem[d] + r->c->stage[k2 / m].act + r->bpref * r->c->stage[k / m].act <=
                        r->limit[d]) {
                    *key = k2;
                    return PPSIM_OP_F;
                }
                if (r->f_ready[k2] > t)
                    vs_wake(wake, r->f_ready[k2]);
                break;
            }
        }
    } else {
        if (r->cycle >= 2 && r->bpos[d] > 0) {
            int kind = vs_pick_alt(r, d, t, key, wake);
            if (kind != -2)
                return kind;
        }
        PpsimTime best = -1;
        for (int i = 0; i < 2; i++) { /* B: by the policy's preference */
            int s = r->stages[d][r->bpref == VS_B_EARLIER ? 1 - i : i], j = r->next_b[s];
            if (j >= m || r->b_ready[s * m + j] < 0)
                continue;
            PpsimTime rdy = r->b_ready[s * m + j];
            if (rdy <= t && (best < 0 || (r->bpref == VS_B_EARLIEST && rdy < best)))
                best = rdy, *key = s * m + j;
            else if (rdy > t)
                vs_wake(wake, rdy);
        }
        int bkey = best >= 0 ? *key : -1, fkey = -1;
        for (int i = 0; i < 2 && fkey < 0; i++) { /* F under the cap, later stage first */
            int s = r->stages[d][i], j = r->next_f[s];
            if (j >= m || r->f_ready[s * m + j] < 0)
                continue;
            PpsimTime rdy = r->f_ready[s * m + j];
            if (rdy <= t && vs_fits(r, d, s))
                fkey = s * m + j;
            else if (rdy > t)
                vs_wake(wake, rdy);
        }
        gboolean has_w = r->wq_head[d] != r->wq_tail[d];
        /* cycle (also where the B-F alternation has nothing to say): from the first B to the
         * last F, F, B and W in turn when the turn's op can run ([ZB] §6's 1F-1B-1W
         * groups); else (and with cycle 0) B, F, W by priority */
        gboolean cool = r->next_f[d] >= m && r->next_f[r->S - 1 - d] >= m; /* no F left */
        int turn = r->cycle == 0 || r->bpos[d] == 0 || cool ? -1
                   : r->last[d] == PPSIM_OP_F               ? PPSIM_OP_B
                   : r->last[d] == PPSIM_OP_B               ? PPSIM_OP_W
                                                            : PPSIM_OP_F;
        if (turn == PPSIM_OP_W && has_w)
            return vs_pop_w(r, d, key);
        if (turn == PPSIM_OP_F && fkey >= 0) {
            *key = fkey;
            return PPSIM_OP_F;
        }
        if (bkey >= 0) {
            *key = bkey;
            return PPSIM_OP_B;
        }
        if (fkey >= 0) {
            *key = fkey;
            return PPSIM_OP_F;
        }
    }
    if (r->wq_head[d] != r->wq_tail[d]) {
        *key = r->wq[d * (2 * m + 1) + r->wq_head[d]];
        return PPSIM_OP_W;
    }
    return -1;
}

/* Runs op (@kind, @key) on device @d from @t; returns its end. */
static PpsimTime
vs_execute(VRun *r, int d, int kind, int key, PpsimTime t)
{
    int m = r->m, s = key / m, j = key % m;
    const PpsimStageEstimate *st = &r->c->stage[s];
    PpsimTime end;
    r->clean[d] = FALSE;
    if (kind == PPSIM_OP_F && s + 1 < r->S)
        r->clean[vs_device(r, s + 1)] = FALSE;
    else if (kind == PPSIM_OP_B && s > 0)
        r->clean[vs_device(r, s - 1)] = FALSE;
    if (kind == PPSIM_OP_F) {
        end = t + st->f_ps;
        r->mem[d] += st->act;
        r->peak[d] = MAX(r->peak[d], r->mem[d]);
        if (s + 1 < r->S)
            r->f_ready[key + m] = vs_arrival(r, s, s + 1, end);
        else
            r->b_ready[key] = end; /* the loss: B follows on the same device */
        r->next_f[s]++;
        r->f_done[key] = TRUE;
    } else if (kind == PPSIM_OP_B) {
        end = t + st->b_ps;
        r->mem[d] -= st->act - st->act_w;
        if (s > 0)
            r->b_ready[key - m] = vs_arrival(r, s, s - 1, end);
        r->next_b[s]++;
        r->bpos[d]++;
        r->wq[d * (2 * m + 1) + r->wq_tail[d]] = key;
        r->wq_tail[d] = (r->wq_tail[d] + 1) % (2 * m + 1);
    } else {
        end = t + st->w_ps;
        r->mem[d] -= st->act_w;
        if (r->mode != VS_STRICT) /* strict mode runs the template's W, not the queue's */
            r->wq_head[d] = (r->wq_head[d] + 1) % (2 * m + 1);
    }
    if (r->mode == VS_STRICT)
        r->spos[d]++;
    r->last[d] = kind;
    if (kind != PPSIM_OP_W)
        r->last_fb[d] = kind;
    /* the device's list has room for its 6 m ops (ppsim_vrun); ppsim_schedule_push's op */
    GArray *ops = r->out->compute[d];
    g_assert(r->n_ops[d] < (int)ops->len);
    g_array_index(ops, PpsimOp, r->n_ops[d]++) =
        (PpsimOp){.kind = kind, .stage = s, .microbatch = j};
    return end;
}

/* Device @d found nothing to run at @t: what vs_pick decides depends only on @t, the
 * device's own state and the arrival times of its stages' next F and B (other devices write
 * those), and changes with @t only once @t reaches one of those arrivals. */
static void
vs_remember_wait(VRun *r, int d, PpsimTime t, PpsimTime wake)
{
    PpsimTime at = -1;
    for (int i = 0; i < 2; i++) {
        int s = i == 0 ? d : r->S - 1 - d;
        if (r->next_f[s] < r->m && r->f_ready[s * r->m + r->next_f[s]] > t)
            vs_wake(&at, r->f_ready[s * r->m + r->next_f[s]]);
        if (r->next_b[s] < r->m && r->b_ready[s * r->m + r->next_b[s]] > t)
            vs_wake(&at, r->b_ready[s * r->m + r->next_b[s]]);
    }
    r->clean[d] = TRUE;
    r->cwake[d] = wake;
    r->recheck[d] = at;
}

/* Event loop: the free device with the earliest time decides next (ties: lowest id; the
 * order is kept by v-queue.h); a device with nothing to run waits for an arrival or for
 * another device to move on. FALSE when every device left is stuck (the cap admits no
 * progress); a stuck device is passed over until some device runs an op. */
static gboolean
vs_loop(VRun *r)
{
    int p = r->p;
    g_autofree PpsimTime *free_at = g_new0(PpsimTime, p);
    g_autofree int *left = g_new(int, p);
    g_autofree PpsimTime *first = g_new(PpsimTime, p);
    g_autofree PpsimTime *busy = g_new0(PpsimTime, p);
    g_autofree PpsimTime *work = g_new0(PpsimTime, p); /* compute the device has left */
    for (int d = 0; d < p; d++) {
        left[d] = 6 * r->m, first[d] = -1;
        for (int i = 0; i < 2; i++) {
            const PpsimStageEstimate *st = &r->c->stage[i == 0 ? d : r->S - 1 - d];
            work[d] += r->m * (st->f_ps + st->b_ps + st->w_ps);
        }
    }
    PpsimVQueue q;
    ppsim_vqueue_init(&q, free_at, p);
    r->makespan = r->idle = 0;
    gboolean ok = FALSE;
    for (;;) {
        int at = ppsim_vqueue_top(&q), d = at < 0 ? -1 : q.order[at];
        if (d < 0) {
            ok = q.n == 0;
            for (int e = 0; ok && e < p; e++)
                r->idle += free_at[e] - first[e] - busy[e];
            break;
        }
        int key = -1, kind = -1;
        PpsimTime wake = r->cwake[d];
        if (!r->clean[d] || (r->recheck[d] >= 0 && free_at[d] >= r->recheck[d])) {
            kind = vs_pick(r, d, free_at[d], &key, &wake);
            if (kind < 0)
                vs_remember_wait(r, d, free_at[d], wake);
        }
        if (kind >= 0) {
            if (first[d] < 0)
                first[d] = free_at[d];
            PpsimTime end = vs_execute(r, d, kind, key, free_at[d]);
            busy[d] += end - free_at[d];
            work[d] -= end - free_at[d];
            free_at[d] = end;
            r->makespan = MAX(r->makespan, free_at[d]);
            /* the device cannot end before free_at + the compute it has left: once that
             * passes the bound, the candidate cannot beat the best so far */
            if (r->bound > 0 && free_at[d] + work[d] > r->bound)
                break;
            if (--left[d] > 0)
                ppsim_vqueue_moved(&q, at);
            else
                ppsim_vqueue_remove(&q, at);
            ppsim_vqueue_unstick_all(&q);
            continue;
        }
        /* the next time anything may change for it: an input's arrival or another device
         * moving on (stuck ones included) */
        PpsimTime next = wake;
        vs_wake(&next, ppsim_vqueue_next_after(&q, free_at[d]));
        if (next >= 0) {
            free_at[d] = next;
            if (r->bound > 0 && free_at[d] + work[d] > r->bound)
                break;
            ppsim_vqueue_moved(&q, at);
        } else {
            ppsim_vqueue_set_stuck(&q, d);
        }
    }
    ppsim_vqueue_clear(&q);
    return ok;
}

gboolean
ppsim_vrun(int p, int m, VsPolicy pol, const PpsimCostEstimates *c, const gint64 *limit,
           const PpsimSchedule *tpl, PpsimTime bound, PpsimSchedule **out, gint64 *peak,
           PpsimTime *makespan, PpsimTime *idle)
{
    int S = 2 * p;
    VRun r = {.p = p,
              .m = m,
              .S = S,
              .mode = pol.mode,
              .reserve = pol.reserve,
              .bpref = pol.bpref,
              .cycle = pol.cycle,
              .warm_a = pol.warm_a,
              .warm_b = pol.warm_b,
              .c = c,
              .limit = limit,
              .tpl = tpl,
              .bound = bound};
    r.last = g_new(int, p);
    r.last_fb = g_new(int, p);
    for (int d = 0; d < p; d++)
        r.last[d] = r.last_fb[d] = -1;
    r.out = ppsim_schedule_new(p, S, m);
    ppsim_schedule_map_vshape(r.out);
    r.n_ops = g_new0(int, p);
    r.clean = g_new0(gboolean, p);
    r.cwake = g_new(PpsimTime, p);
    r.recheck = g_new(PpsimTime, p);
    for (int d = 0; d < p; d++)
        g_array_set_size(r.out->compute[d], 6 * m); /* written in place, trimmed below */
    r.stages = g_malloc_n(p, sizeof(int[2]));
    for (int d = 0; d < p; d++)
        r.stages[d][0] = S - 1 - d, r.stages[d][1] = d;
    r.f_ready = g_new(PpsimTime, S * m);
    r.b_ready = g_new(PpsimTime, S * m);
    for (int i = 0; i < S * m; i++)
        r.f_ready[i] = i < m ? 0 : -1, r.b_ready[i] = -1;
    r.next_f = g_new0(int, S);
    r.next_b = g_new0(int, S);
    r.fseq = g_new0(int *, p);
    r.bseq = g_new0(int *, p);
    r.nf = g_new0(int, p);
    r.nb = g_new0(int, p);
    r.fpos = g_new0(int, p);
    r.bpos = g_new0(int, p);
    r.spos = g_new0(int, p);
    r.wq = g_new(int, p *(2 * m + 1));
    r.wq_head = g_new0(int, p);
    r.wq_tail = g_new0(int, p);
    r.mem = g_new0(gint64, p);
    r.peak = g_new0(gint64, p);
    r.f_slot = g_new0(int, S *m);
    r.f_done = g_new0(gboolean, S * m);
    r.b_slot = g_new0(int, S *m);
    if (tpl != NULL)
        for (int d = 0; d < p; d++) {
            GArray *ops = tpl->compute[d];
            r.fseq[d] = g_new(int, ops->len);
            r.bseq[d] = g_new(int, ops->len);
            for (guint i = 0; i < ops->len; i++) {
                const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
                int k = op->stage * m + op->microbatch;
                if (op->kind == PPSIM_OP_F)
                    r.fseq[d][r.nf[d]++] = k, r.f_slot[k] = (int)i;
                else if (op->kind == PPSIM_OP_B)
                    r.bseq[d][r.nb[d]++] = k, r.b_slot[k] = (int)i;
            }
        }
    gboolean ok = vs_loop(&r);
    for (int d = 0; d < p; d++)
        g_array_set_size(r.out->compute[d], r.n_ops[d]);
    g_free(r.n_ops);
    g_free(r.clean);
    g_free(r.cwake);
    g_free(r.recheck);
    for (int d = 0; ok && d < p; d++)
        ok = r.peak[d] <= limit[d];
    memcpy(peak, r.peak, p * sizeof(gint64));
    *makespan = r.makespan;
    *idle = r.idle;
    if (ok)
        *out = r.out;
    else
        ppsim_schedule_free(r.out);
    for (int d = 0; d < p; d++)
        g_free(r.fseq[d]), g_free(r.bseq[d]);
    g_free(r.fseq);
    g_free(r.bseq);
    g_free(r.nf);
    g_free(r.nb);
    g_free(r.fpos);
    g_free(r.bpos);
    g_free(r.spos);
    g_free(r.last);
    g_free(r.last_fb);
    g_free(r.f_slot);
    g_free(r.f_done);
    g_free(r.b_slot);
    g_free(r.wq);
    g_free(r.wq_head);
    g_free(r.wq_tail);
    g_free(r.mem);
    g_free(r.peak);
    g_free(r.next_f);
    g_free(r.next_b);
    g_free(r.f_ready);
    g_free(r.b_ready);
    g_free(r.stages);
    return ok;
}
