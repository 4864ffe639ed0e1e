/* overlap.h: the time of an F&B pair, a forward and a full backward of two chunks run
 * overlapped as one op ([DSV3] §3.2.1, [DUALPIPE] "F&B"), split between its two halves. */
#pragma once

#include "cost/cost-model.h"

G_BEGIN_DECLS

/* Fills est.fo_ps and est.bwo_ps of every stage of @c (schedule.h PPSIM_OP_FLAG_OVERLAP).
 *
 * Explicit mode: the pair lasts `costs.forward_backward` (absent or 0: F + B + W, no gain);
 * with per-stage op times, each stage's pair is that time scaled by the stage's
 * F + B + W over the scalar one. Hardware mode, the overlap model: a pair runs the two
 * halves' compute back to back, and each half's communication inside the op (TP
 * collectives; the MoE all-to-alls, moe.h) runs during the other half's
 * compute, as DualPipe arranges it ([DSV3] §3.2.1: all-to-all and PP communication hidden
 * behind the other chunk's compute); what does not fit behind that compute adds to the pair:
 *   pair = cF + cBW + max(0, xF - cBW) + max(0, xBW - cF),
 * c = compute, x = communication of a half, both halves taken at this stage's costs (exact
 * for pairs of equal stages, as DualPipe's are in the steady state).
 * The F half gets cF + max(0, xF - cBW), the BW half the rest; in explicit mode the halves
 * split the pair in proportion to F and B + W. */
void ppsim_cost_overlap_fill(PpsimCosts *c, const PpsimScenario *scenario);

/* Hardware mode under the kernel model, a stage with MoE layers and expert parallelism
 * (cost-model.h pair_layers): the pair runs layer by layer as Megatron-Core's 1F1B
 * all-to-all overlap schedules one forward layer and one backward layer ([MEG]
 * `core/models/common/model_chunk_schedule_plan.py` TransformerLayerSchedulePlan.run at
 * core_v0.15.0), on two CUDA streams:
 *   communication: combine gradient | dispatch, dispatch gradient | combine
 *   compute:       attention F      | MLP B, MLP W, MLP F         | attention B, attention W
 * each op waiting for the op of the other stream whose output it takes (the MLP's backward
 * for the combine gradient, the dispatch for the forward's attention, and so on; the next
 * layer's attention F for this layer's combine, its combine gradient for this layer's
 * attention B). The pair lasts those @n layers, the compute beside a running all-to-all
 * @slow longer again (the SMs it holds, as below), plus the rest of the two halves' compute
 * (the stage's dense layers, embedding, head, ...) after them; TP collectives stay inside
 * the compute, on its stream. The halves split the pair in proportion to their compute. A
 * phase's all-to-all hides only behind that phase's compute, so a pair hides less than the
 * whole-stage model below when the phases are uneven. */
PpsimTime ppsim_cost_overlap_layers(int n, const PpsimTime attn[3], const PpsimTime mlp[3],
                                    const PpsimTime a2a[2], double slow);

/* The two halves of an F&B pair of an F lasting @f and a full backward lasting @bw, @x_f and
 * @x_bw of which are communication, under the hardware model above. */
void ppsim_cost_overlap_halves(PpsimTime f, PpsimTime bw, PpsimTime x_f, PpsimTime x_bw,
                               PpsimTime *fo, PpsimTime *bwo);

/* The same, where each half's MoE all-to-alls (@a_f, @a_bw, part of or beside its
 * communication) hold some of the SMs while they run: the other half's compute beside them,
 * up to their length, takes @slow (s / (1 - s), s their share of the SMs; moe.h
 * ppsim_moe_comm_sms) longer again, and the pair with it:
 *   c'F = cF + min(cF, aBW) slow,  c'BW = cBW + min(cBW, aF) slow,
 *   pair = c'F + c'BW + max(0, xF - c'BW) + max(0, xBW - c'F).
 * DualPipe keeps 20 of the H800's 132 SMs for its all-to-alls ([DSV3] §3.5.1). */
void ppsim_cost_overlap_halves_sm(PpsimTime f, PpsimTime bw, PpsimTime x_f, PpsimTime x_bw,
                                  PpsimTime a_f, PpsimTime a_bw, double slow, PpsimTime *fo,
                                  PpsimTime *bwo);

/* The communication of one F (@x_f) and one full backward (@x_bw) of a stage that an F&B
 * pair of that stage hides: x_f + x_bw less what sticks out past the other half's compute
 * (the hardware model above). */
PpsimTime ppsim_cost_overlap_hidden(PpsimTime f, PpsimTime bw, PpsimTime x_f, PpsimTime x_bw);

G_END_DECLS
