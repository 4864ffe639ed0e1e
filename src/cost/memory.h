/* memory.h: what one GPU of a training job holds in hardware mode, beyond the schedule's
 * activations (src/README.md "How memory is modelled"). Pure functions of the scenario.
 *
 * Model states per parameter ([ZERO] §3.1, [MEGDO]): 16-bit weights (2 bytes), gradients
 * (4 bytes with fp32 main gradients, Megatron's default with bf16; 2 with bf16), and the
 * optimizer (fp32 master weights and Adam's two moments, 12 bytes), sharded over the
 * dp x cp ranks by ZeRO's stage (1 = Megatron's distributed optimizer). Then, per
 * GPU and outside PyTorch's caching allocator: memory.reserved (CUDA context, kernel images,
 * library workspaces) and NCCL's buffers, per communicator. The allocator itself holds
 * memory.fragmentation x the allocated bytes on top, reserved but free.
 */
#pragma once

#include <glib.h>
#include "scenario/scenario.h"
#include "cost/cost-model.h"

G_BEGIN_DECLS

/* The model states of @params parameters held by one GPU (already / tp), bytes. */
typedef struct {
    double weights, gradients, optimizer;
} PpsimModelStateBytes;

/* Gradient bytes per parameter: 4 (fp32 main gradients) or 2 (bf16). */
double ppsim_mem_grad_bytes_per_param(const PpsimTraining *training);

/* Splits training.bytes_per_param (2 + gradients + 12 unless written) into weights (2),
 * gradients and optimizer states (the rest), then shards them over @dp replicas as ZeRO
 * stage @zero does ([ZERO] §5): 1 the optimizer states, 2 also the gradients, 3 also the
 * weights. */
void ppsim_mem_model_state(double params, const PpsimTraining *training, int zero, int dp,
                           PpsimModelStateBytes *out);

/* What one GPU keeps of one microbatch's logits from the loss's forward to its backward: the
 * fp32 softmax, 4sbV/t ([KOR] §4.3; vocabulary-parallel over the tp GPUs), or with
 * model.cross_entropy: te the bf16 gradient written over the logits, 2sbV/t. */
double ppsim_mem_logits_kept_bytes(const PpsimScenario *sc);

/* The gradient the loss's backward writes while it runs: the bf16 copy of the fp32 gradient
 * it computes over the kept softmax in place (PyTorch's autograd casts a gradient to its
 * input's dtype; [MEG-CE]), 2sbV/t, or 0 with model.cross_entropy: te (its backward scales
 * the kept gradient in place). */
double ppsim_mem_logits_grad_bytes(const PpsimScenario *sc);

/* The ranks ZeRO shards gradients and optimizer states over: dp x cp. Megatron builds its
 * gradient buffers and its distributed optimizer over the data-parallel group with context
 * parallelism (`intra_dp_cp_group`, [MEG] `distributed_data_parallel.py` and
 * `optimizer/__init__.py`): the cp ranks of a sequence hold the same weights and reduce
 * their gradients together, so they shard like data-parallel replicas. 1 without
 * `parallel:`. */
int ppsim_mem_shard_ranks(const PpsimScenario *sc);

/* The ranks the routed experts' gradients and optimizer states shard over: the
 * expert-data-parallel group, tp x cp x dp / (etp x ep) (dp x cp / ep with the default
 * etp = tp; at least 1). Megatron-Core keeps the experts'
 * gradients in their own buffers, reduced and sharded over that group, which holds the
 * same experts ([MEG] `distributed_data_parallel.py`: `intra_expt_dp_group`;
 * `optimizer/__init__.py`). */
int ppsim_mem_expert_shard_ranks(const PpsimScenario *sc);

/* The parameters whose optimizer state one GPU of @st holds and steps: all of them without
 * ZeRO, else the dense ones over ppsim_mem_shard_ranks and the routed experts' over
 * ppsim_mem_expert_shard_ranks. */
double ppsim_mem_local_shard(const PpsimStageCost *st, const PpsimScenario *sc);

/* NCCL's buffers per GPU: one communicator per parallel group of two or more GPUs (tensor,
 * pipeline, context, and the gradients' dp x cp group), 544 MiB for two ranks and 688 MiB
 * for more ([NCCL964], A100 with NVLink, measured per group). */
double ppsim_mem_nccl_bytes(const PpsimScenario *sc);

/* Everything per GPU outside the caching allocator: memory.reserved + NCCL's buffers
 * (bytes; 0 in explicit mode). */
gint64 ppsim_mem_fixed_bytes(const PpsimScenario *sc);

/* The GPU memory a device needs when the allocator has @allocated bytes in use: allocated,
 * plus @fragmentation of it reserved but free, plus @fixed. */
gint64 ppsim_mem_total(gint64 allocated, gint64 fixed, double fragmentation);

/* The most bytes the allocator may have in use for the total to stay within @limit (1 when
 * not even the fixed part fits, so that a limit stays one); @limit 0 (no limit) gives 0. */
gint64 ppsim_mem_allocatable(gint64 limit, gint64 fixed, double fragmentation);

/* The stage's linear-layer weights on one GPU (@st->params less the 16-bit embedding and LM
 * head; the norms and a router's few are counted with them): those FP8 casts or stores. */
double ppsim_mem_linear_params(const PpsimStageCost *st, const PpsimScenario *sc);

/* The cost model's hook (hardware mode): sets @st's static memory from its params (per GPU)
 * as ppsim_mem_model_state splits it under the scenario's ZeRO stage over dp x cp (the
 * routed experts' over dp x cp / ep), and
 * logits_mem and logits_grad_mem on the stage with the loss. */
void ppsim_mem_fill_stage(PpsimStageCost *st, const PpsimScenario *sc);

/* The cost model's hook for the whole run: memory_fixed and memory_fragmentation, and the
 * generators' view: estimates.memory_limit is what the allocator may hold (so a generator's
 * cap never counts on memory the model knows is taken), and each stage's est.static_mem
 * also holds the logits' gradient its backward writes. Explicit mode: the limit as given. */
void ppsim_mem_fill_costs(PpsimCosts *c, const PpsimScenario *sc);

G_END_DECLS
