/* gemm.h: the time of one GPU kernel, a roofline with shape-dependent GEMM efficiency.
 *
 * Pure functions of a small GPU description (PpsimGpuSpec, filled from the scenario's
 * hardware.gpu section). A GEMM C(M x N) = A(M x K) B(K x N) runs as output tiles of
 * tile_m x tile_n, one tile per SM at a time ([NV-GEMM] "Tile quantization", "Wave
 * quantization"); each tile also pays a fixed cost (filling its pipeline, writing its
 * output) worth k_overhead elements of K, so a GEMM runs at K / (K + k_overhead) of its
 * rate ([XLA-MM]); its time is max(FLOPs / (peak x large-GEMM efficiency x quantization x
 * K / (K + k_overhead)), bytes / (HBM bandwidth x memory efficiency)) + one launch
 * overhead. Memory-bound kernels (norms, activations, dropout, softmax, the optimizer) are
 * bytes / (HBM x efficiency) + launch.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
    double peak_flops;      /* dense 16-bit tensor FLOP/s */
    double gemm_eff;        /* large-GEMM efficiency: achieved / peak on a well-shaped GEMM */
    double attn_eff;        /* FlashAttention kernels: achieved / peak */
    double attn_eff_bwd;    /* ... in their backward (0: attn_eff) */
    int sms;                /* streaming multiprocessors */
    int tile_m, tile_n;     /* output tile of a large cuBLAS kernel */
    double k_overhead;      /* a tile's fixed cost, in elements of K (0: none) */
    double hbm_bytes_per_s; /* HBM bandwidth */
    double mem_eff;         /* achieved / HBM bandwidth of a streaming kernel */
    double launch_s;        /* per kernel: launch and ramp (s) */
    double elem_bytes;      /* bytes of an A or B operand element (2: bf16, 1: fp8); the
                             * result is written in 16 bits */
} PpsimGpuSpec;

/* The share of the SMs' tile slots a GEMM's output (M x N, inner K) fills: tiles =
 * ceil(M/tm) ceil(N/tn), in waves of `sms` tiles; M x N / (waves x sms x tm x tn). The tile
 * is laid along the longer side; a GEMM of fewer tiles than SMs is split along K
 * (split-K, at most K / 256 ways) before counting. In (0, 1]. */
double ppsim_gemm_quantization(const PpsimGpuSpec *gpu, double M, double N, double K);

/* Seconds of @batch independent GEMMs of M x N x K (16-bit operands, one batched kernel):
 * the roofline described above. 0 when any dimension is 0. */
double ppsim_gemm_seconds(const PpsimGpuSpec *gpu, double M, double N, double K, double batch);

/* Seconds of a memory-bound kernel moving @bytes (read + written). */
double ppsim_mem_seconds(const PpsimGpuSpec *gpu, double bytes);

/* Seconds of a kernel of @flops at @eff of peak that also moves @bytes: the roofline. */
double ppsim_kernel_seconds(const PpsimGpuSpec *gpu, double flops, double eff, double bytes);

G_END_DECLS
