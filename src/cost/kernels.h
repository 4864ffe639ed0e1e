/* kernels.h: operator-level op times in hardware mode (src/README.md "How time is modelled").
 *
 * A stage's F, B and W are the kernels a Megatron-style implementation runs on one GPU of
 * its tensor-parallel group: per layer the QKV, attention-output and MLP GEMMs (B: their
 * dgrad GEMMs, W: their wgrad GEMMs), the attention core (FlashAttention, or the standard
 * QK^T / softmax / dropout / AV kernels), the memory-bound kernels (norms, activation,
 * dropout + residual, rotary), the TP collectives on the critical path, in an MoE layer the
 * router, token permutation and grouped expert GEMMs in the MLP's place; the embedding on
 * the first stage, the final norm, LM head and fp32 cross-entropy on the last; the
 * optimizer step. Each kernel is a roofline (cost/gemm.h); collectives are NCCL-style
 * (cost/collectives.h). Pure functions of the scenario.
 */
#pragma once

#include <glib.h>
#include "scenario/scenario.h"
#include "cost/cost-model.h"
#include "cost/gemm.h"
#include "cost/collectives.h"

G_BEGIN_DECLS

/* Kernel classes of compute_breakdown. */
enum { PPSIM_KERN_GEMM, PPSIM_KERN_ATTENTION, PPSIM_KERN_MEMORY, PPSIM_KERN_N };

/* Whether @sc is timed by the kernel model: hardware mode without hardware.gpu.efficiency. */
gboolean ppsim_kernels_active(const PpsimScenario *sc);

/* Fails naming the key when the GPU or links lack a number the kernel model needs. */
gboolean ppsim_kernels_check(const PpsimScenario *sc, GError **error);

/* The kernel model's view of the scenario's GPU. */
void ppsim_kernels_gpu(const PpsimHardware *hw, PpsimGpuSpec *out);

/* The kernels FP8 adds (training.dtype: fp8; all zero otherwise), as kernels.c counts their
 * bytes on one GPU of the TP group: per layer and microbatch one entry a kernel in F, B and
 * W; per layer and step each weight's cast + transpose (QKV, attention output, fc1, fc2);
 * per layer and microbatch the bytes the two norms no longer write (their output is FP8);
 * per chunk and microbatch the amax / scale update of the GPU's layers (concatenation, fused
 * update) after the forward and after the backward (none with current scaling, whose amax
 * passes and scale kernels are entries of f and b, and whose norms save nothing). */
#define PPSIM_FP8_KERNELS 16
typedef struct {
    double f[PPSIM_FP8_KERNELS], b[PPSIM_FP8_KERNELS], w[PPSIM_FP8_KERNELS];
    int nf, nb, nw;
    double weight[4];
    double norm_saved;
    double update_f[2], update_b[2];
} PpsimFp8Kernels;

void ppsim_kernels_fp8(const PpsimScenario *sc, PpsimFp8Kernels *out);

/* Replaces the times of @st (filled by the closed-form path: its layers, flags, memory and
 * params are kept) with the kernel model's: est.f/b/w/r_ps, the TP/DP collectives, the
 * optimizer step and the breakdown. The recompute mode is @sc's model.recompute. */
void ppsim_kernels_fill_stage(PpsimStageCost *st, const PpsimScenario *sc);

/* The optimizer step of one GPU of @st: Adam and clipping over the parameters whose state
 * it holds (ppsim_mem_local_shard), 34 bytes each, as one memory-bound pass. */
PpsimTime ppsim_kernels_optimizer_ps(const PpsimStageCost *st, const PpsimScenario *sc);

/* ZeRO-3 with parallel.zero3_layout: per_param (PyTorch FSDP2): adds to @st's F and B the
 * copies of its gathered weights into the parameters (2 + 2 bytes a parameter, before every
 * F and every B) and, spread over the step's microbatches, of its gradients into the
 * reduce-scatter's buffer (2 bytes read, 2 or 4 written: parallel.grad_reduce_dtype), one
 * kernel a unit (a layer, the embedding, the head), from @st->params as the MoE layers leave
 * them. Nothing otherwise. */
void ppsim_kernels_fill_zero3_copies(PpsimStageCost *st, const PpsimScenario *sc);
/* training.grad_accumulation: bytes a parameter moves, a microbatch, to accumulate its
 * gradient (0 when fused), and that pass added to @st's W (kernel model only). */
double ppsim_kernels_grad_accum_bytes(const PpsimScenario *sc);
void ppsim_kernels_fill_grad_accumulation(PpsimStageCost *st, const PpsimScenario *sc);

/* ppsim_kernels_fill_stage with @fp8_scaling FALSE leaving out the kernels FP8 adds (the
 * norms then write 2 bytes): for comparisons. */
void ppsim_kernels_fill_stage_scaling(PpsimStageCost *st, const PpsimScenario *sc,
                                      gboolean fp8_scaling);

G_END_DECLS
