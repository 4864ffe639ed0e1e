/* overlap.c: the F&B pair's time and its split between the halves; see overlap.h. */
#include "cost/overlap.h"

#include "util/units.h"

#include <math.h>

PpsimTime
ppsim_cost_overlap_hidden(PpsimTime f, PpsimTime bw, PpsimTime x_f, PpsimTime x_bw)
{
    x_f = CLAMP(x_f, 0, f);
    x_bw = CLAMP(x_bw, 0, bw);
    PpsimTime c_f = f - x_f, c_bw = bw - x_bw;
    return MIN(x_f, c_bw) + MIN(x_bw, c_f);
}

void
ppsim_cost_overlap_halves_sm(PpsimTime f, PpsimTime bw, PpsimTime x_f, PpsimTime x_bw,
                             PpsimTime a_f, PpsimTime a_bw, double slow, PpsimTime *fo,
                             PpsimTime *bwo)
{
    x_f = CLAMP(x_f, 0, f);
    x_bw = CLAMP(x_bw, 0, bw);
    PpsimTime c_f = f - x_f, c_bw = bw - x_bw;
    if (slow > 0) { /* the compute beside the other half's all-to-alls, on fewer SMs */
        c_f += (PpsimTime)llround((double)MIN(c_f, MAX(0, a_bw)) * slow);
        c_bw += (PpsimTime)llround((double)MIN(c_bw, MAX(0, a_f)) * slow);
    }
    *fo = c_f + MAX(0, x_f - c_bw);
    *bwo = c_bw + MAX(0, x_bw - c_f);
}

void
ppsim_cost_overlap_halves(PpsimTime f, PpsimTime bw, PpsimTime x_f, PpsimTime x_bw, PpsimTime *fo,
                          PpsimTime *bwo)
{
    ppsim_cost_overlap_halves_sm(f, bw, x_f, x_bw, 0, 0, 0.0, fo, bwo);
}

/* One op of a pair's layer schedule: its length and the op of the other stream it waits for
 * (-1: none). */
typedef struct {
    double len;
    int after;
} PairOp;

PpsimTime
ppsim_cost_overlap_layers(int n, const PpsimTime attn[3], const PpsimTime mlp[3],
                          const PpsimTime a2a[2], double slow)
{
    if (n <= 0)
        return 0;
    /* per layer, the compute stream: attn F, mlp B, mlp W, mlp F, attn B, attn W; the
     * communication stream: combine gradient, dispatch, dispatch gradient, combine */
    enum { NC = 6, NM = 4 };
    g_autofree PairOp *comp = g_new(PairOp, (gsize)n * NC);
    g_autofree PairOp *comm = g_new(PairOp, (gsize)n * NM);
    for (int i = 0; i < n; i++) {
        PairOp *c = &comp[i * NC], *m = &comm[i * NM];
        c[0] = (PairOp){(double)attn[0], i > 0 ? (i - 1) * NM + 3 : -1}; /* prev combine */
        c[1] = (PairOp){(double)mlp[1], i * NM + 0};                     /* combine grad */
        c[2] = (PairOp){(double)mlp[2], -1};
        c[3] = (PairOp){(double)mlp[0], i * NM + 1};  /* dispatch */
        c[4] = (PairOp){(double)attn[1], i * NM + 2}; /* dispatch gradient */
        c[5] = (PairOp){(double)attn[2], -1};
        m[0] = (PairOp){(double)a2a[0], i > 0 ? (i - 1) * NC + 4 : -1}; /* prev attn B */
        m[1] = (PairOp){(double)a2a[0], i * NC + 0};                    /* attn F */
        m[2] = (PairOp){(double)a2a[1], i * NC + 1};                    /* mlp B */
        m[3] = (PairOp){(double)a2a[1], i * NC + 3};                    /* mlp F */
    }
    /* two in-order streams; an op waits for its stream and for the other stream's op it
     * needs; compute beside a running all-to-all progresses 1 / (1 + slow) as fast */
    int ci = 0, mi = 0, nc = n * NC, nm = n * NM;
    double t = 0.0, rc = comp[0].len, rm = comm[0].len;
    while (ci < nc || mi < nm) {
        gboolean c_on = ci < nc && comp[ci].after < mi;
        gboolean m_on = mi < nm && comm[mi].after < ci;
        if (!c_on && !m_on) { /* cannot happen: every wait points back in the other stream */
            g_assert_not_reached();
            break;
        }
        double rate = m_on ? 1.0 / (1.0 + MAX(0.0, slow)) : 1.0;
        double dt = INFINITY;
        if (c_on)
            dt = MIN(dt, rc / rate);
        if (m_on)
            dt = MIN(dt, rm);
        t += dt;
        if (c_on && (rc -= dt * rate) <= 0.5 && ++ci < nc)
            rc = comp[ci].len;
        if (m_on && (rm -= dt) <= 0.5 && ++mi < nm)
            rm = comm[mi].len;
    }
    return ppsim_round_clamped(t);
}

static void
overlap_split_explicit(PpsimStageEstimate *e, PpsimTime pair)
{
    PpsimTime whole = e->f_ps + e->b_ps + e->w_ps;
    e->fo_ps = whole > 0 ? (PpsimTime)llround((double)pair * (double)e->f_ps / (double)whole) : 0;
    e->fo_ps = CLAMP(e->fo_ps, 0, pair);
    e->bwo_ps = pair - e->fo_ps;
}

void
ppsim_cost_overlap_fill(PpsimCosts *c, const PpsimScenario *scenario)
{
    const PpsimCostsSpec *cs = &scenario->costs;
    gboolean per_stage = cs->stage_forward != NULL || cs->stage_backward_input != NULL ||
                         cs->stage_backward_weight != NULL;
    PpsimTime scalar = cs->forward_ps + cs->backward_input_ps + cs->backward_weight_ps;
    for (int s = 0; s < c->n_stages; s++) {
        PpsimStageCost *st = &c->stage[s];
        PpsimStageEstimate *e = &st->est;
        PpsimTime whole = e->f_ps + e->b_ps + e->w_ps;
        if (c->explicit_mode) {
            PpsimTime pair = whole;
            if (cs->forward_backward_ps > 0)
                pair = !per_stage || scalar <= 0
                           ? cs->forward_backward_ps
                           : (PpsimTime)llround((double)cs->forward_backward_ps * (double)whole /
                                                (double)scalar);
            overlap_split_explicit(e, pair);
            continue;
        }
        if (st->pair_layers > 0) { /* MoE layers sub-module by sub-module */
            int n = st->pair_layers;
            double cf = (double)MAX(0, e->f_ps - st->ep_comm_f_ps);
            double cbw = (double)MAX(0, e->b_ps + e->w_ps - st->ep_comm_b_ps), per = 0;
            for (int i = 0; i < 3; i++)
                per += (double)st->pl_attn_ps[i] + (double)st->pl_mlp_ps[i];
            double rest = MAX(0.0, cf + cbw - n * per);
            double pair = (double)ppsim_cost_overlap_layers(n, st->pl_attn_ps, st->pl_mlp_ps,
                                                            st->pl_a2a_ps, st->ep_pair_slow) +
                          rest;
            e->fo_ps = cf + cbw > 0 ? ppsim_round_clamped(pair * cf / (cf + cbw)) : 0;
            e->bwo_ps = ppsim_round_clamped(pair) - e->fo_ps;
            continue;
        }
        ppsim_cost_overlap_halves_sm(e->f_ps, e->b_ps + e->w_ps,
                                     st->tp_comm_f_ps + st->ep_comm_f_ps,
                                     st->tp_comm_b_ps + st->ep_comm_b_ps, st->ep_comm_f_ps,
                                     st->ep_comm_b_ps, st->ep_pair_slow, &e->fo_ps, &e->bwo_ps);
    }
}
