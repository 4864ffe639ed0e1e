/* v-pick.c: how a candidate of v-run.c picks a device's next op, in each of its modes (free,
 * template, strict, slot; see v-run.c). */
#include "sched/vshape/v-run-impl.h"

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

int
ppsim_vrun_pick(VRun *r, int d, PpsimTime t, int *key, PpsimTime *wake)
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
