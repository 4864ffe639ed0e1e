/* cost-model.h: per-stage durations and bytes from a scenario ([NAR21], [KOR], [ZB] Table 1).
 *
 * Pure functions: no I/O, no global state. Hardware mode derives everything from the model,
 * the training shape and the GPU; explicit-cost mode takes the `costs:` section as given, as
 * the papers do. Memory is in "memory units": bytes in hardware mode, explicit units x 1000
 * (so fractions such as weight_activation 0.5 stay exact integers) in explicit mode.
 */
#pragma once

#include <glib.h>
#include "scenario/scenario.h"
#include "cost/cost-estimates.h"

G_BEGIN_DECLS

/* Explicit units are stored multiplied by this, so that 0.5 units is exact. */
#define PPSIM_EXPLICIT_MEM_SCALE 1000

typedef struct {
    PpsimStageEstimate est; /* times and activation units, as generators see them */
    int first_layer;        /* hardware mode: transformer layers [first_layer, +layers) */
    int layers;
    gboolean has_embedding; /* first stage */
    gboolean has_head;      /* last stage: final norm + LM head + loss */
    int mtp;                /* multi-token prediction depths on the stage (model.mtp_layers,
                             * on the last stage; mtp.h): each a transformer layer beyond
                             * `layers`, a projection and a second pass of the head */
    double params;          /* parameters held by the stage */
    double expert_params;   /* moe.c: of params, the routed experts' (their gradients and
                             * optimizer states shard over dp x cp / ep ranks, memory.h) */
    double unit_params;     /* the most parameters one GPU holds of one unit ZeRO-3 gathers
                             * whole at a time: a layer, the embedding or the head */
    gint64 static_mem;      /* weights + gradients + optimizer states (memory units) */
    gint64 act_ckpt;        /* kept after F when R recomputes the rest: the stage's input
                             * (memory units) */
    guint64 p2p_bytes;      /* activation sent to the next stage (= gradient sent back) */
    guint64 offload_bytes;  /* bytes an OFF moves for this stage's activation */
    PpsimTime opt_ps;       /* optimizer step on the GPU */
    double fwd_flops;       /* hardware mode: forward FLOPs of one microbatch */
    /* parallel.c (zero without a `parallel:` section): per GPU of the stage's TP group */
    PpsimTime tp_comm_f_ps;   /* TP collectives inside one F (and one R) */
    PpsimTime tp_comm_b_ps;   /* TP collectives inside one B */
    PpsimTime ep_comm_f_ps;   /* moe.c: MoE all-to-alls inside one F (and one R) */
    PpsimTime ep_comm_b_ps;   /* moe.c: MoE all-to-alls inside one B */
    double ep_pair_slow;      /* moe.c: in an F&B pair, the compute beside the other half's
                               * all-to-alls takes this much longer again (s / (1 - s), s the
                               * share of the SMs those hold; 0 without) */
    guint64 ep_bytes_f;       /* moe.c: bytes each GPU sends in one F's all-to-alls (over the
                               * NIC when the EP group spans nodes, else NVLink) */
    guint64 ep_bytes_b;       /* moe.c: the same in one B */
    guint64 ep_near_bytes_f;  /* moe.c: with a group spanning nodes, what goes besides to the
                               * EP ranks on the GPU's own node, over NVLink, in one F */
    guint64 ep_near_bytes_b;  /* moe.c: the same in one B */
    PpsimTime zero_gather_ps; /* ZeRO-3 parameter all-gather inside one F and one B */
    guint64 zero_bytes;       /* of it, bytes each GPU sends (and receives) in the ring */
    PpsimTime dp_comm_ps;     /* gradient reduction over dp after the stage's last backward */
    guint64 dp_bytes;         /* of it, bytes each GPU sends (and receives) in the ring */
    PpsimTime pg_ps;          /* parallel.overlap_param_gather (ZeRO 1-2): the all-gather of
                               * the stage's updated weights, before its first F (the
                               * other half of the all-reduce dp_comm_ps then leaves out) */
    guint64 pg_bytes;         /* of it, bytes each GPU sends (and receives) in the ring */
    PpsimRecompute recompute; /* the stage's mode: model.stage_recompute, else model.recompute */
    PpsimTime b_recompute_ps; /* hardware mode: of est.b_ps, the forward re-run that the
                               * stage's recompute mode folds into each B (no R op) */
    /* kernel model, MoE layers (overlap.h ppsim_cost_overlap_layers): an F&B pair runs the
     * stage's pair_layers MoE layers sub-module by sub-module, each layer's compute split in
     * two parts, F, B and W of each (ps, its exposed TP collectives included): pl_attn_ps
     * everything but the MLP block (attention, norms, residuals), pl_mlp_ps the MLP block
     * (kernels.c moe_mlp: router, permutation, experts, shared experts); pl_a2a_ps one
     * all-to-all of each direction (moe.c: [0] F's dispatch, B's combine gradient; [1] F's
     * combine, B's dispatch gradient). pair_layers 0: the whole-stage model (overlap.h). */
    int pair_layers;
    PpsimTime pl_attn_ps[3], pl_mlp_ps[3], pl_a2a_ps[2];
    /* hardware mode, kernel model (cost/kernels.h): compute time of one F, one B (with the
     * re-run its recompute mode folds in) and one W by kernel class: GEMM, attention core,
     * memory-bound (ps; TP/CP collectives excluded); zero otherwise */
    PpsimTime kern_f_ps[3], kern_b_ps[3], kern_w_ps[3];
    /* memory.c (hardware mode): static_mem's parts in bytes; on the stage with the loss, what
     * one microbatch keeps of its logits (part of est.act) and the gradient its B or BW writes
     * while it runs */
    double weights_mem, grads_mem, opt_mem;
    gint64 logits_mem, logits_grad_mem;
    /* memory.c (hardware mode): of weights_mem, grads_mem and opt_mem, the last stage's copy
     * of the word embedding (the tied head, or the MTP depths' copy, mtp.h), which a device
     * that also holds the first stage (V-shapes) keeps once ([DSV3] §3.2.3: the "physical
     * sharing of parameters and gradients" of the embedding and the head); 0 elsewhere */
    double copy_weights_mem, copy_grads_mem, copy_opt_mem;
} PpsimStageCost;

typedef struct {
    gboolean explicit_mode;
    gboolean kernel_model; /* hardware mode timed kernel by kernel (cost/kernels.h) */
    int n_stages;
    PpsimStageCost *stage;           /* [n_stages] */
    PpsimStageEstimate *est;         /* [n_stages] copy of stage[i].est, for PpsimCostEstimates */
    PpsimCostEstimates estimates;    /* generator view; .stage points at est */
    int *host_link;                  /* [p] PCIe switch per device (hardware mode), or NULL */
    PpsimTime p2p_latency_ps;        /* explicit mode: latency of a cross-device dependency */
    double mem_scale;                /* divide memory units by this to report */
    const char *memory_unit;         /* "bytes" or "units" */
    gint64 memory_limit;             /* per device, memory units; 0 = none */
    double offload_ratio_k;          /* [PO] Formula 1, hardware mode; 0 in explicit mode */
    double offload_ratio_k_scenario; /* the same ratio for this scenario's stored bytes */
    /* memory.c, hardware mode (0 in explicit mode): per device, memory.reserved + NCCL's
     * buffers, and memory.fragmentation */
    gint64 memory_fixed;
    double memory_fragmentation;
    /* hardware mode, model.tied_embeddings with more than one stage: the bytes each GPU of
     * the first stage and of the last sends the other in the all-reduce of the word
     * embedding's gradient (its V/tp x h main gradient in parallel.grad_reduce_dtype); the
     * replay runs it when the two stages sit on different devices. 0: none. */
    guint64 tied_grad_bytes;
} PpsimCosts;

/* Builds the costs of @scenario split into @n_stages stages (S = p * v). Fails with
 * PPSIM_SCENARIO_ERROR_VALUE when the split is impossible (fewer layers than stages, a
 * stage_layers list of the wrong length or sum). Returns: (transfer full) (nullable). */
PpsimCosts *ppsim_costs_new(const PpsimScenario *scenario, int n_stages, GError **error);
void ppsim_costs_free(PpsimCosts *costs);
/* Repeats the @c's stages @times over (stage k*S + s gets stage s's costs): the costs of a
 * schedule with several pipelines over the same layers (schedule.h pipe_stages). */
void ppsim_costs_repeat(PpsimCosts *c, int times);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PpsimCosts, ppsim_costs_free)

/* ---- formulas, exposed for tests and reports ---- */

/* Forward FLOPs of one transformer layer for one microbatch: 24bsh^2 + 4bs^2h with GQA and
 * FFN width generalised as in [ZBREPO] training.py ([NAR21] App.). */
double ppsim_cost_layer_fwd_flops(const PpsimModel *model, int microbatch_size);
/* Activation bytes stored by one layer for one microbatch ([KOR] Eq. (1), Table 2). */
double ppsim_cost_layer_act_bytes(const PpsimModel *model, int microbatch_size);
/* Of those, what W still needs after B ([ZB] Table 1: 32sbh of 34sbh). */
double ppsim_cost_layer_act_w_bytes(const PpsimModel *model, int microbatch_size);
/* Parameters of one transformer layer: 12h^2 + 13h generalised for GQA/FFN width. */
double ppsim_cost_layer_params(const PpsimModel *model);
/* Whether stage @st's LM head is its own embedding matrix (model.tied_embeddings, one stage
 * holding both), so that the head adds no parameters. */
static inline gboolean
ppsim_cost_head_is_embedding(const PpsimStageCost *st, const PpsimModel *model)
{
    return model->tied_embeddings && st->has_embedding && st->has_head;
}
/* The transformer layers stage @st computes: its layers and its MTP depths' (the layers of
 * index layers, layers + 1, ... of the model, past the decoder's last: MoE ones in an MoE
 * model). */
static inline int
ppsim_cost_stage_blocks(const PpsimStageCost *st)
{
    return st->layers + st->mtp;
}
/* What a stage's R recomputes its activation from, the stage's input for one microbatch:
 * the token ids (8 bytes each) on the stage with the embedding, else the 2sbh-byte layer
 * input (divided by @split: the TP size with sequence parallelism, else 1), 0 for a stage
 * without layers, embedding or head; of the GPU's s/cp tokens under context parallelism.
 * (memory units: bytes) */
gint64 ppsim_cost_stage_input_bytes(const PpsimStageCost *st, const PpsimScenario *scenario,
                                    int split);
/* [PO] Formula 1: k = 10 / (3(6h + s)) * B_c / B_o. It assumes 20sbh stored per layer
 * (recompute: light) and counts the full s^2 attention. */
double ppsim_cost_offload_ratio(int hidden, int seq_len, double compute_flops_per_s,
                                double offload_bytes_per_s);

G_END_DECLS
