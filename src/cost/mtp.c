/* mtp.c: multi-token prediction; see mtp.h. */
#include "cost/mtp.h"
#include "cost/memory.h"

gboolean
ppsim_mtp_embedding_copy(const PpsimStageCost *st, const PpsimModel *model)
{
    return st->mtp > 0 && !st->has_embedding && !model->tied_embeddings;
}

void
ppsim_mtp_extras(const PpsimStageCost *st, const PpsimScenario *sc, int tp, gboolean sp,
                 PpsimMtpExtras *out)
{
    *out = (PpsimMtpExtras){0};
    if (st->mtp <= 0)
        return;
    const PpsimModel *m = &sc->model;
    double D = st->mtp, h = m->hidden, V = m->vocab;
    double sbh = (double)m->seq_len * sc->training.microbatch_size * h;
    double rep = sp ? MAX(1, tp) : 1;
    /* eh_proj (2h -> h) and the head (h -> V): 2 x tokens x in x out each */
    out->fwd_flops = D * (2.0 * sbh * 2.0 * h + 2.0 * sbh * V);
    /* eh_proj has no bias; enorm, hnorm and the final norm as the model's (RMSNorm a weight,
     * LayerNorm a weight and a bias) */
    double norm = m->mlp == PPSIM_MLP_SWIGLU ? h : 2.0 * h;
    out->params = D * (2.0 * h * h + 3.0 * norm) + (ppsim_mtp_embedding_copy(st, m) ? V * h : 0.0);
    /* 16-bit: the two norms' inputs (2 + 2 sbh), the concatenation eh_proj keeps (4 sbh), the
     * final norm's input (2 sbh), of the GPU's share under sequence parallelism; the logits
     * as the main head keeps them */
    out->act = D * (10.0 * sbh / rep + ppsim_mem_logits_kept_bytes(sc));
    out->act_w = D * 6.0 * sbh / rep;
}
