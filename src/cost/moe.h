/* moe.h: mixture-of-experts layers and expert parallelism in the cost model (model.moe,
 * parallel.ep). Pure functions of the scenario (moe.c); the cost model fills each stage as
 * if dense and then calls ppsim_moe_fill_stage, the one hook.
 *
 * An MoE layer replaces the dense FFN (ffn_hidden) by a router (h x E) and E routed experts
 * of width expert_ffn_hidden, top_k of them per token, plus shared_experts every token passes
 * ([DSV3] §2.1.2; [MIXTRAL] §2). The first dense_layers layers stay dense. Per microbatch of
 * T = b s / cp tokens on one pipeline device (one GPU of its tp group, tokens split tp ways):
 * - compute: each token's top_k expert FFNs and the shared ones, with the routed load of the
 *   busiest EP rank: load = capacity_factor (padded slots, dropped tokens beyond) when set,
 *   else the imbalance factor (dropless, the busiest rank sets the pace of the all-to-all).
 *   B and W each equal F for these GEMMs ([ZB] Table 1). That is the closed form (with
 *   hardware.gpu.efficiency); under the kernel model the layer's MLP is kernels.c's
 *   moe_mlp instead (router, permutation, grouped expert GEMMs, shared experts) and this
 *   file keeps the parameters, the memory and the all-to-alls.
 * - parameters per GPU: E/ep routed experts (the EP group shares them), each split over
 *   the etp GPUs of its expert-tensor-parallel group (parallel.etp, default tp; the shared
 *   experts and the router split over tp as the dense MLP is). Static memory scales with
 *   them; the routed experts' gradients and optimizer states shard and reduce over the
 *   tp cp dp / (etp ep) ranks that hold the same experts (memory.h), the rest over dp x cp.
 * - expert tensor parallelism (Megatron-Core's ETP x EP x EDP folding of a stage's TP x CP x
 *   DP ranks, [MEG] `parallel_state.py`): the experts of an etp group see its etp x T/tp
 *   tokens, gathered over etp GPUs (none with etp 1) and each GPU computes fe/etp of every
 *   expert; the FLOPs per GPU are the same for every etp, the GEMM shapes and the
 *   collectives are not. With etp = tp the EP ranks are spaced as DP replicas are (tp x cp
 *   apart, Megatron-Core r0.9's "tp-cp-ep-dp-pp"); with etp < tp, etp apart from inside
 *   the TP group on (the folded order, "tp-ep-dp-pp" over the stage's ranks).
 * - activations: per routed slot (load x top_k of them per token) and per shared expert, the
 *   dense FFN's activation scaled to expert_ffn_hidden plus the 2h-byte copy of the token the
 *   dispatch made; the router's fp32 probabilities (4E bytes per token). None beyond the
 *   layer input under full recompute.
 * - expert parallelism (ep > 1): a dispatch and a combine all-to-all per MoE layer in F (and
 *   two in B, four under full recompute), each GPU sending load x top_k x T/tp tokens of 2h
 *   bytes, 1/ep of them to each EP rank, the group spaced as DP replicas are. NCCL runs an
 *   all-to-all as point-to-point sends to every peer at once: those to the ranks on the
 *   GPU's own node (L of the ep share it) go over NVLink, (L-1)/ep of the bytes, those to
 *   other nodes through the GPU's one NIC, (ep-L)/ep, side by side ([NCCL-T267]: an
 *   all-to-all does not aggregate several NICs, it runs at one NIC's rate, and the
 *   bandwidth it reports exceeds the NIC's by the share NVLink carries). Each all-to-all
 *   takes the longer of the two: bytes / bandwidth + latency, the bandwidth NCCL's bus
 *   bandwidth of the transport (line rate x hardware.*.bus_efficiency, as every collective of
 *   the kernel model; the line rate with hardware.gpu.efficiency set).
 *   With parallel.ep_dispatch: deepep (DeepEP, HybridEP: [DSV3] §3.2.2's forwarding) a
 *   token goes once to each GPU holding any of its top_k experts ([DEEPEP]
 *   `get_dispatch_layout`), and crosses the network once to each other node holding any:
 *   (nodes - 1)(1 - C(E - E/nodes, top_k) / C(E, top_k)) copies a token under uniform
 *   routing, in place of top_k (ep - L)/ep, to the GPU of the same index there; NVLink then
 *   carries a copy to each other GPU holding one, (ep - nodes)(1 - C(E - E/ep, top_k) /
 *   C(E, top_k)) copies (one node: ep - 1 GPUs; with one expert a GPU this is the top_k
 *   (L - 1)/L of the all-to-all). The combine mirrors it (partial sums reduced before each
 *   hop). With group-limited routing (model.moe.groups, group_top_k) the token's experts
 *   are top_k of its group_top_k groups' (uniform over both), which a node or GPU holds
 *   with the probability moe.c's moe_p_holds gives.
 *   These times (ep_comm_f_ps, ep_comm_b_ps) are part of the F and B estimates generators
 *   see, and what the overlap model lets an F&B pair hide (overlap.h). The replay instead
 *   runs them (ep_bytes_f, ep_bytes_b; ep_near_bytes_f, ep_near_bytes_b over
 *   NVLink beside them when the group spans nodes: the bytes over the bus efficiency, what
 *   the line rate carries in NCCL's time) as flows sharing the links with the
 *   pipeline's sends and the DP reduction (sim-parallel.c), before each op's compute, or
 *   beside an F&B pair's. With parallel.ep_fp8_dispatch the dispatch direction (F's
 *   dispatch, B's combine gradient) carries (1 + 4/128) / 2 of those bytes (FP8 values, an
 *   fp32 scale per 128). Not modelled: the split of each all-to-all around the expert
 *   compute inside an op; the quantizing kernels around an FP8 dispatch.
 */
#pragma once

#include "cost/cost-model.h"

G_BEGIN_DECLS

/* How many of the layers [first, first + n) have experts. */
int ppsim_moe_layers_in(const PpsimModel *model, int first, int n);

/* The routed load of the busiest EP rank over the mean: capacity_factor when set (padded
 * slots), else imbalance (dropless). */
double ppsim_moe_load(const PpsimMoe *moe);

/* The expert-tensor-parallel size (parallel.etp; 1 without a `parallel:` section). */
int ppsim_moe_etp(const PpsimScenario *sc);

/* How many of a GPU's EP group sit on its node (at least 1), under the placement and etp. */
int ppsim_moe_ep_per_node(const PpsimScenario *sc);

/* The SMs the all-to-alls hold while they run beside compute in an F&B pair
 * (`parallel.ep_comm_sms`; unwritten, by dispatch): DeepEP's normal kernels, as Megatron-Core
 * runs them for DeepSeek-V3-like training, 24 ([DEEPEP]: its V2 cut "SM usage ... from 24 to
 * 4 - 6" for that use); NCCL's all-to-all none counted, no figure being published. */
int ppsim_moe_comm_sms(const PpsimScenario *sc);

/* Parameters of the whole model (embedding, layers, final norm, untied LM head) counting
 * every expert (@total) and those a token passes (@active: top_k routed + shared). */
void ppsim_moe_model_params(const PpsimModel *model, double *total, double *active);

/* Adjusts stage @st, filled as dense by the cost model (hardware mode), for its MoE layers:
 * times, FLOPs, activations, parameters and the all-to-all times ep_comm_f_ps and
 * ep_comm_b_ps (set to 0 for a dense stage). @rate: FLOP/s per GPU as the cost model uses. */
void ppsim_moe_fill_stage(PpsimStageCost *st, const PpsimScenario *sc, double rate);

G_END_DECLS
