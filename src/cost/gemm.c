/* gemm.c: kernel rooflines and GEMM tile/wave quantization; see gemm.h.
 *
 * [NV-GEMM] NVIDIA, "Matrix Multiplication Background User's Guide" (DU-09799-001): a GEMM
 * is computed as tiles of the output, each tile by one thread block on one SM; a dimension
 * that is not a multiple of the tile wastes the rest of the last tile (tile quantization);
 * the tiles run in waves of one tile per SM, and a last partial wave leaves SMs idle (wave
 * quantization). What one SM achieves on a full tile is the large-GEMM efficiency, a
 * measured constant per GPU ([MAMF]). A tile also pays a fixed cost (filling its pipeline,
 * writing its output) that a deep K amortizes: the GEMM runs at K / (K + k_overhead) of the
 * rate, the form OpenXLA's measured sm_90 table fits ([XLA-MM]).
 */
#include "cost/gemm.h"

#include <math.h>

/* Split-K slices are at least this deep (elements of K). */
#define SPLIT_K_MIN 256.0

/* Tiles of one M x N output, the tile laid along the longer side. */
static double
gemm_tiles(const PpsimGpuSpec *gpu, double M, double N, double *tm, double *tn)
{
    double big = MAX(gpu->tile_m, gpu->tile_n), small = MIN(gpu->tile_m, gpu->tile_n);
    *tm = M >= N ? big : small;
    *tn = M >= N ? small : big;
    return ceil(M / *tm) * ceil(N / *tn);
}

double
ppsim_gemm_quantization(const PpsimGpuSpec *gpu, double M, double N, double K)
{
    if (M <= 0 || N <= 0 || K <= 0)
        return 1.0;
    double tm, tn;
    double tiles = gemm_tiles(gpu, M, N, &tm, &tn);
    double sms = gpu->sms;
    double split = 1.0;
    if (tiles < sms) /* split-K fills idle SMs with slices of the inner dimension */
        split = MAX(1.0, MIN(floor(sms / tiles), floor(K / SPLIT_K_MIN)));
    double units = tiles * split;
    double waves = ceil(units / sms);
    return (M * N * split) / (waves * sms * tm * tn);
}

double
ppsim_kernel_seconds(const PpsimGpuSpec *gpu, double flops, double eff, double bytes)
{
    double compute = flops > 0 ? flops / (gpu->peak_flops * eff) : 0.0;
    double memory = bytes > 0 ? bytes / (gpu->hbm_bytes_per_s * gpu->mem_eff) : 0.0;
    return MAX(compute, memory) + gpu->launch_s;
}

double
ppsim_gemm_seconds(const PpsimGpuSpec *gpu, double M, double N, double K, double batch)
{
    if (M <= 0 || N <= 0 || K <= 0 || batch <= 0)
        return 0.0;
    double flops = 2.0 * M * N * K * batch;
    double q;
    if (batch <= 1) {
        q = ppsim_gemm_quantization(gpu, M, N, K);
    } else { /* one batched kernel: the tiles of every GEMM share the waves */
        double tm, tn;
        double tiles = gemm_tiles(gpu, M, N, &tm, &tn) * batch;
        q = (M * N * batch) / (ceil(tiles / gpu->sms) * gpu->sms * tm * tn);
    }
    double eb = gpu->elem_bytes > 0 ? gpu->elem_bytes : 2.0;
    double bytes = batch * (eb * (M * K + K * N) + 2.0 * M * N);
    double depth = K / (K + MAX(gpu->k_overhead, 0.0)); /* each tile's fixed cost */
    return ppsim_kernel_seconds(gpu, flops, gpu->gemm_eff * q * depth, bytes);
}

double
ppsim_mem_seconds(const PpsimGpuSpec *gpu, double bytes)
{
    if (bytes <= 0)
        return 0.0;
    return bytes / (gpu->hbm_bytes_per_s * gpu->mem_eff) + gpu->launch_s;
}
