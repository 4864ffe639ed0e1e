/* mtp.h: multi-token prediction (model.mtp_layers; [DSV3] §2.2, [MEG]
 * `megatron/core/transformer/multi_token_prediction.py`). Pure functions (mtp.c).
 *
 * Each MTP depth k sits with the LM head on the last stage (Megatron-Core's default layout;
 * DeepSeek-V3's DualPipe puts that stage on the first stage's device): it embeds the tokens k
 * ahead with the shared embedding, normalises that and the previous depth's output (`enorm`,
 * `hnorm`), projects their concatenation from 2h to h (`eh_proj`, column-parallel, its
 * output gathered over the TP group and scattered back to the sequence), runs one transformer
 * layer of the model's last layer's kind, normalises it, and takes logits and a loss through
 * the shared output head. The layer counts with the stage's layers
 * (ppsim_cost_stage_blocks); what the rest adds is below. Megatron-Core keeps a copy of the
 * word embedding on that stage when the head is untied and all-reduces its gradient with the
 * first stage's, as for tied embeddings ([MEG] `gpt_model.py`, `finalize_model_grads.py`).
 */
#pragma once

#include <glib.h>
#include "scenario/scenario.h"
#include "cost/cost-model.h"

G_BEGIN_DECLS

typedef struct {
    double fwd_flops; /* one microbatch's forward FLOPs over the whole tp group's tokens
                       * (projection and head; the backward's dgrad and wgrad each as much) */
    double params;    /* projection, three norms, and the embedding's copy if the stage needs
                       * one (whole, not / tp) */
    double act;       /* bytes one microbatch keeps: the norms' and the projection's inputs
                       * (of the GPU's sequence-parallel share) and the logits */
    double act_w;     /* of those, what W needs: the projection's and the head's inputs */
} PpsimMtpExtras;

/* What @st's MTP depths add beyond their layers, on one GPU of a TP group of @tp with
 * sequence parallelism @sp (tp 1, FALSE without `parallel:`). All zero without depths. */
void ppsim_mtp_extras(const PpsimStageCost *st, const PpsimScenario *sc, int tp, gboolean sp,
                      PpsimMtpExtras *out);
/* Adds @x to a stage's running sums: its forward FLOPs, the backward's dgrad and wgrad ones
 * (each as much as the forward's), parameters and kept bytes. */
static inline void
ppsim_mtp_add(const PpsimMtpExtras *x, double *fwd, double *bwd_in, double *bwd_w, double *params,
              double *act, double *act_w)
{
    *fwd += x->fwd_flops;
    *bwd_in += x->fwd_flops;
    *bwd_w += x->fwd_flops;
    *params += x->params;
    *act += x->act;
    *act_w += x->act_w;
}
/* Whether @st holds a copy of the word embedding for its MTP depths (untied, not the first
 * stage). */
gboolean ppsim_mtp_embedding_copy(const PpsimStageCost *st, const PpsimModel *model);

G_END_DECLS
