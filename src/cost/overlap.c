/* overlap.c: the F&B pair's time and its split between the halves; see overlap.h. */
#include "cost/overlap.h"

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
        ppsim_cost_overlap_halves_sm(e->f_ps, e->b_ps + e->w_ps,
                                     st->tp_comm_f_ps + st->ep_comm_f_ps,
                                     st->tp_comm_b_ps + st->ep_comm_b_ps, st->ep_comm_f_ps,
                                     st->ep_comm_b_ps, st->ep_pair_slow, &e->fo_ps, &e->bwo_ps);
    }
}
