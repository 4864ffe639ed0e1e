/* parallel.h: tensor, sequence and data parallelism and ZeRO in the cost model; Llama-style
 * (SwiGLU, GQA) layers. Pure functions of the scenario (parallel.c).
 *
 * One pipeline device is one tensor-parallel group of tp GPUs acting in lockstep; every
 * per-device quantity here is per GPU of that group. The simulated pipeline is one of the
 * dp replicas; the others run the same schedule at the same time.
 */
#pragma once

#include <glib.h>
#include "scenario/scenario.h"
#include "cost/cost-model.h"

G_BEGIN_DECLS

/* Ring all-reduce of @bytes over @n ranks on links of @bytes_per_s per direction with a
 * per-step latency: 2(n-1)/n x bytes / bandwidth + 2(n-1) x latency (reduce-scatter then
 * all-gather, each n-1 steps). 0 when n = 1. */
PpsimTime ppsim_ring_allreduce_ps(double bytes, int n, double bytes_per_s, PpsimTime latency_ps);
/* Ring reduce-scatter or all-gather: half the above. */
PpsimTime ppsim_ring_gather_ps(double bytes, int n, double bytes_per_s, PpsimTime latency_ps);

/* GEMM FLOPs of one layer's forward for one microbatch (GELU: 2 MLP matrices, SwiGLU: 3). */
double ppsim_par_layer_gemm_flops(const PpsimModel *model, int microbatch_size);
/* Parameters of one layer (GELU: [NAR21] Eq. (2) generalised; SwiGLU: no biases, RMSNorm). */
double ppsim_par_layer_params(const PpsimModel *model);
/* Activation bytes one GPU of a tp group stores for one layer and one microbatch ([KOR]
 * §4.2: replicated part + split part / tp, or everything / tp with sequence parallelism). */
double ppsim_par_layer_act_bytes(const PpsimModel *model, int microbatch_size, int tp,
                                 gboolean sequence_parallel);
/* What FP8 (training.dtype: fp8) takes off that: the inputs of the layer's Transformer Engine
 * linears kept for their wgrads as FP8, 1 byte an element instead of 2 (the two norm
 * outputs, QKV's and fc1's inputs; the projection's input; fc2's, the activation's output),
 * as the recompute mode keeps them (light: the projection's input only; full: nothing). */
double ppsim_par_layer_fp8_saved_bytes(const PpsimModel *model, int microbatch_size, int tp,
                                       gboolean sequence_parallel);
/* Parameters of the whole model (embedding, layers, final norm, untied LM head). */
double ppsim_par_model_params(const PpsimModel *model);

/* Static bytes per GPU for @params parameters held by that GPU (already / tp) under ZeRO
 * stage @zero over @dp replicas, [ZERO] §5 with K = bytes_per_param - 4 (2 bytes of fp16/bf16
 * weights, 2 of gradients, K of optimizer states): stage 0 (2+2+K)Ψ, 1: 2Ψ + 2Ψ + KΨ/Nd,
 * 2: 2Ψ + (2+K)Ψ/Nd, 3: (2+2+K)Ψ/Nd. */
double ppsim_zero_static_bytes(double params, double bytes_per_param, int zero, int dp);

/* The links a collective of @group ranks spaced @stride GPUs apart crosses: NVLink when
 * the group fits in one node, else the NICs (the ring's slowest hop). */
void ppsim_par_group_link(const PpsimHardware *hw, int group, int stride, double *bytes_per_s,
                          PpsimTime *latency_ps);

/* GPUs between consecutive pipeline devices and between consecutive DP replicas under the
 * scenario's placement. */
int ppsim_par_pp_stride(const PpsimScenario *sc);
int ppsim_par_dp_stride(const PpsimScenario *sc);

/* Bytes per gradient the DP reduction moves (parallel.grad_reduce_dtype: 2 or 4). */
double ppsim_par_grad_reduce_bytes(const PpsimScenario *sc);

/* Bytes of @st's weights (@st->params of them) one GPU's shard all-gathers: 2 a parameter,
 * but the linear layers' 1 with training.fp8_weights (the gathers move the FP8 weights). */
double ppsim_par_weight_gather_bytes(const PpsimStageCost *st, const PpsimScenario *sc);

/* A ZeRO-1/2 stage's DP collectives from the times (@rs, @ag) and the bytes each GPU sends
 * (@rs_bytes, @ag_bytes) of the gradients' reduce-scatter and the updated weights'
 * all-gather: both in dp_comm_ps and dp_bytes, or with parallel.overlap_param_gather the
 * all-gather in pg_ps and pg_bytes. */
void ppsim_par_set_dp_halves(PpsimStageCost *st, const PpsimScenario *sc, PpsimTime rs,
                             PpsimTime ag, double rs_bytes, double ag_bytes);

/* Whether the dp replicas of a GPU sit on other nodes (their traffic crosses the NICs). */
gboolean ppsim_par_dp_across_nodes(const PpsimScenario *sc);

/* The members of one DP group on each node when the group spans nodes (1 when they are
 * one a node, or when the group fits in a node). NCCL's rings, one per NIC, enter a node
 * once each, so a node's NICs together carry one copy of a ring collective's data: each
 * GPU's NIC carries 1/local of what a GPU of the ring sends. */
int ppsim_par_dp_local(const PpsimScenario *sc);

/* How many of a group of @group ranks, @stride GPUs apart, sit on one node (at least 1). */
int ppsim_par_group_per_node(const PpsimHardware *hw, int group, int stride);

/* The hardware as the replay sees it: one endpoint per pipeline device, so gpus_per_node
 * (and GPUs per PCIe switch) count pipeline devices per node under the placement. */
void ppsim_par_device_hardware(const PpsimScenario *sc, PpsimHardware *out);

/* Whether the scenario uses the generalised (parallel / Llama) cost path. */
gboolean ppsim_par_active(const PpsimScenario *sc);

/* Fills one stage (its layers, has_embedding and has_head set) in hardware mode on the
 * generalised path: per GPU of a tp group, compute at @rate FLOP/s per GPU; all but
 * act_ckpt, which the caller (cost-model.c) sets from the split returned: the divisor of
 * the stage's input activation (the TP size with sequence parallelism, else 1). */
int ppsim_par_fill_stage(PpsimStageCost *st, const PpsimScenario *sc, double rate);

G_END_DECLS
