/* scenario-presets.c: hardware presets. Every number cites its source (README References); the ones
 * no source gives (latencies, worker counts) are stated assumptions. */
#include "scenario/scenario.h"

#include <string.h>

#define GB 1e9
#define GIB (1024.0 * 1024.0 * 1024.0)
#define TIB (1024.0 * GIB)
#define US PPSIM_PS_PER_US

/* The two constants fitted on measured runs (results/measured.md states on which rows):
 * the large-GEMM efficiency of the A100 and the share of HBM bandwidth memory-bound
 * kernels achieve. */
#define A100_GEMM_EFF 0.78
#define A100_MEM_EFF 0.65
/* H100, fitted on six measured H100 runs whose every layout key is published
 * (results/measured.md: the six [DGXC] BF16 recipes at their fewest GPUs; the page's other
 * H100 rows are its predictions): the large-GEMM efficiency of the H100 (bf16), 0.772 of
 * the best-shaped cuBLAS GEMM ([MAMF]: 794.5 of 989 TFLOP/s, 0.803). H800 shares it (H100
 * compute). Its memory efficiency is the A100's. */
#define H100_GEMM_EFF 0.62
/* FP8: the same share of [MAMF]'s FP8 best (1,402.6 of 1,979 TFLOP/s, 0.709), DERIVED: 0.547 */
#define H100_GEMM_EFF_FP8 (0.709 * H100_GEMM_EFF / 0.803)
/* H100 attention kernels (model.attention_kernel), from [FA3]'s BF16 benchmarks, head dim
 * 128, sequence 8K (TFLOP/s): forward with the causal mask (Fig. 5) FlashAttention-2 333,
 * cuDNN 529, FlashAttention-3 602; backward (Fig. 6, no causal panel) 318, 518, 559. At the
 * backward's 2.5x FLOPs that is 0.33, 0.53 and 0.58 of 989 TFLOP/s with the non-causal
 * backward, and 0.30, 0.48 and 0.55 if the causal mask costs the backward what it costs the
 * forward; each efficiency lies in its range. [FA3]'s abstract: FlashAttention-2 reaches
 * "only 35% utilization on the H100". [CUDNN-FE]'s benchmark (cuDNN 9.1, H200 clocks locked
 * at 1980 MHz, causal, head dim 128, 4K to 64K tokens) agrees: forward and backward together
 * cuDNN 468-520 TFLOP/s, PyTorch's SDPA (FlashAttention-2) 264-329. H800 shares them (H100
 * compute). */
#define H100_ATTN_CUDNN 0.5 /* 0.48-0.53 */
#define H100_ATTN_FA2 0.31  /* 0.30-0.33 */
#define H100_ATTN_FA3 0.55  /* 0.55-0.58 */

/* First-generation FlashAttention (model.attention_kernel: fa1): FlashAttention 1.x's CUDA
 * kernels and the Triton FlashAttention of 2022-23 (flash_attn_triton.py) that LLM Foundry's
 * `attn_impl: triton` runs on its pre-MLIR Triton fork ([MPT-BENCH]; its TUTORIAL.md finds it
 * "slightly faster than flash", FlashAttention 1). Its passes differ: "Triton forward is
 * generally faster than CUDA forward, while Triton backward is generally slower than CUDA
 * backward" ([FLASH-REPO] flash_attn_triton.py), so the forward and the backward have a figure
 * each. FITTED, the two together, on the [MPT-BENCH] A100 80 GB rows of 16,384 to 65,536
 * tokens (results/measured.md; every other row of that table is a prediction): those with
 * activation checkpointing run the forward twice, those without once. Over a step without
 * recompute (the backward's 2.5x FLOPs) they make 0.30 of peak, inside the "25-40% of the
 * theoretical maximum FLOPs/s" [FA2]'s abstract gives FlashAttention on the A100. Neither
 * kernel has a Hopper code path (the fork's LLVM does not know sm_90, TUTORIAL.md), so on
 * Hopper both keep their ratio to FlashAttention-2, the other Ampere-era kernel, whose A100
 * and H100 figures are above: DERIVED. The CUDA kernels (FlashAttention 1.x: MLPerf round
 * 3.0's) take the Triton kernel's figures. */
#define A100_ATTN_FA2 0.5
#define A100_ATTN_FA1 0.53
#define A100_ATTN_FA1_BWD 0.26
#define H100_ATTN_FA1 (A100_ATTN_FA1 * H100_ATTN_FA2 / A100_ATTN_FA2)
#define H100_ATTN_FA1_BWD (A100_ATTN_FA1_BWD * H100_ATTN_FA2 / A100_ATTN_FA2)

/* A GEMM tile's fixed cost (its prologue filling the pipeline, its epilogue writing the
 * output) in elements of the inner dimension K: fitted with the large-GEMM efficiency and a
 * per-kernel cost on OpenXLA's measured sm_90 bf16 GEMM table ([XLA-MM]: 69 shapes with M, N,
 * K >= 1024, each within 3.6%; results/measured.md re-runs the fit), not on a training run.
 * The A100 takes the same figure (no A100 table of GEMMs by shape was found). */
#define GEMM_K_OVERHEAD 144

/* The kernel model's figures of Hopper's compute, which H100, H800 and H200 share (the same
 * GH100 die): dense BF16 989 and FP8 1,979 TFLOP/s (3,958 with sparsity) and 132 SMs
 * [H100-DS]; the fitted GEMM efficiency (below [MAMF]'s 0.803) and its FP8 share; the
 * attention kernels above (cuDNN's, which TE picks on Hopper [TE], as default); memory
 * efficiency as A100 (no separate fit); 256 x 128 tiles [NV-GEMM] with a fixed cost worth
 * GEMM_K_OVERHEAD of K; 3 us a launch (assumption, as A100). */
#define HOPPER_KERNEL_MODEL                                                                        \
    .gpu_peak_flops = 989e12, .gpu_efficiency = 0, .gpu_sms = 132, .gpu_peak_flops_fp8 = 1979e12,  \
    .gpu_gemm_efficiency = H100_GEMM_EFF, .gpu_gemm_efficiency_fp8 = H100_GEMM_EFF_FP8,            \
    .gpu_attention_efficiency = H100_ATTN_CUDNN,                                                   \
    .gpu_attention_efficiency_cudnn = H100_ATTN_CUDNN,                                             \
    .gpu_attention_efficiency_fa1 = H100_ATTN_FA1,                                                 \
    .gpu_attention_efficiency_fa1_backward = H100_ATTN_FA1_BWD,                                    \
    .gpu_attention_efficiency_fa2 = H100_ATTN_FA2, .gpu_attention_efficiency_fa3 = H100_ATTN_FA3,  \
    .gpu_memory_efficiency = A100_MEM_EFF, .gpu_tile_m = 256, .gpu_tile_n = 128,                   \
    .gpu_gemm_k_overhead = GEMM_K_OVERHEAD, .gpu_launch_ps = 3 * US

/* The DGX A100's figures that its 80 GB and 40 GB models share. Compute: dense 16-bit 312
 * TFLOP/s ([NAR21] §5), 108 SMs and 256 x 128 cuBLAS tiles ([NV-GEMM]), no FP8 tensor cores;
 * the fitted GEMM efficiency (below [MAMF]'s 0.869) and memory efficiency; attention at
 * FlashAttention-2's 0.5 (fwd+bwd 50-73% [FA2] §4.1; what Transformer Engine runs on Ampere,
 * so also the fa2 figure) and the fitted fa1 figure above; the H100's GEMM tile cost
 * ([XLA-MM], assumed: no A100 table of GEMMs by shape was found); 3 us a launch (assumption,
 * a few us). NCCL: all_reduce busbw 232.5 of 300 GB/s over NVSwitch [NCCL-T175], 91 of 100
 * GB/s over 4 HDR NICs [NCCL-T100]. Links: NVLink 600 GB/s total, 300 per direction
 * [MLP-A100]; PCIe ~25 GB/s per direction measured solo [FORUM], two GPUs a Gen4 switch
 * ([VENG]; [PO] App. D Fig. 17) whose uplink gives each about 15 GB/s when both transfer
 * (DERIVED: 30), shared ideally ([PO] App. D saw worse, but its numbers are in images, not
 * recoverable); one HDR 200 Gb/s NIC a GPU ([MLP-A100], [NAR21] §5); the latencies are
 * assumptions. One shared D2H/H2D copy stream ([PO] §4.2). Host: 16 optimizer workers
 * (assumption; 128 cores a node [MLP-A100]) at ~1.4e9 parameters/s a node ([DS-PR735], rough). */
#define A100_DGX_MODEL                                                                             \
    .gpus_per_node = 8, .gpu_peak_flops = 312e12, .gpu_efficiency = 0, .gpu_sms = 108,             \
    .gpu_peak_flops_fp8 = 0, .gpu_gemm_efficiency = A100_GEMM_EFF,                                 \
    .gpu_attention_efficiency = A100_ATTN_FA2, .gpu_attention_efficiency_fa1 = A100_ATTN_FA1,      \
    .gpu_attention_efficiency_fa1_backward = A100_ATTN_FA1_BWD,                                    \
    .gpu_attention_efficiency_fa2 = A100_ATTN_FA2, .gpu_memory_efficiency = A100_MEM_EFF,          \
    .gpu_tile_m = 256, .gpu_tile_n = 128, .gpu_gemm_k_overhead = GEMM_K_OVERHEAD,                  \
    .gpu_launch_ps = 3 * US, .nvlink_bus_efficiency = 0.775, .network_bus_efficiency = 0.91,       \
    .copy_streams = 1, .nvlink_bytes_per_s = 300 * GB, .nvlink_latency_ps = 2 * US,                \
    .pcie_bytes_per_s = 25 * GB, .pcie_uplink_bytes_per_s = 30 * GB, .pcie_latency_ps = 5 * US,    \
    .pcie_gpus_per_switch = 2, .pcie_shared_efficiency = 1.0, .network_bytes_per_s = 25 * GB,      \
    .network_latency_ps = 5 * US, .host_optimizer_workers = 16,                                    \
    .host_adam_params_per_s = 1.4e9 / 16

static const PpsimPreset preset_a100 = {
    .name = "dgx-a100-80gb",
    .summary = "DGX A100: 8x A100-SXM4-80GB, NVSwitch, 2 GPUs per PCIe Gen4 switch",
    .hw = {
        A100_DGX_MODEL, .gpu_memory_bytes = 80 * (guint64)GIB, /* 80 GB HBM2e [MLP-A100] */
        .gpu_hbm_bytes_per_s = 2039 * GB,                      /* 2,039 GB/s HBM2e [A100-DS] */
        .host_memory_bytes = 2 * (guint64)TIB,                 /* 2 TB [MLP-A100] */
    }};

/* The first DGX A100, with the 40 GB A100: HBM2 at 1,555 GB/s [A100-DS], everything else as
 * the 80 GB model (the same SXM4 board, NVSwitch and HDR NICs). The fitted constants are the
 * A100's; results/measured.md's 40 GB rows (GPT-NeoX, GLM-130B, BloombergGPT, [MPT-BENCH]'s
 * A100 40 GB table) check them. Its host memory is not in this project's sources: 1 TB, an
 * assumption (it matters only where optimizer states are offloaded to the host). */
static const PpsimPreset preset_a100_40 = {
    .name = "dgx-a100-40gb",
    .summary = "DGX A100 (40 GB): 8x A100-SXM4-40GB, HBM2 1,555 GB/s; otherwise as dgx-a100-80gb",
    .hw = {
        A100_DGX_MODEL, .gpu_memory_bytes = 40 * (guint64)GIB, /* 40 GB HBM2 [A100-DS] */
        .gpu_hbm_bytes_per_s = 1555 * GB,                      /* 1,555 GB/s HBM2 [A100-DS] */
        .host_memory_bytes = 1 * (guint64)TIB,                 /* assumption, above */
    }};

static const PpsimPreset preset_h100 = {
    .name = "dgx-h100-80gb",
    .summary = "DGX H100: 8x H100-SXM5-80GB, NVSwitch, one PCIe Gen5 path per GPU",
    .hw = {
        .gpus_per_node = 8,                    /* [MLP-H100] */
        .gpu_memory_bytes = 80 * (guint64)GIB, /* 80 GB HBM3 [MLP-H100] */
        HOPPER_KERNEL_MODEL,
        .gpu_hbm_bytes_per_s = 3350 * GB, /* 3.35 TB/s HBM3 [H100-DS] */
        .nvlink_bus_efficiency = 0.82,    /* ring busbw ~370 of 450 GB/s [NCCL-T212] */
        .network_bus_efficiency = 0.92,   /* 46-48 GB/s per NDR NIC [NCCL-T290] */
        .copy_streams = 1,
        .nvlink_bytes_per_s = 450 * GB, /* 900 GB/s total [MLP-H100] */
        .nvlink_latency_ps = 2 * US,    /* assumption */
        .pcie_bytes_per_s = 64 * GB,    /* Gen5 x16 per direction, DERIVED */
        .pcie_uplink_bytes_per_s = 64 * GB,
        .pcie_latency_ps = 5 * US, /* assumption */
        .pcie_gpus_per_switch = 1, /* no GPU shares a switch [VENG] (UNVERIFIED) */
        .pcie_shared_efficiency = 1.0,
        .network_bytes_per_s = 50 * GB,        /* NDR 400 Gb/s per GPU [MLP-H100] */
        .network_latency_ps = 5 * US,          /* assumption */
        .host_memory_bytes = 2 * (guint64)TIB, /* 2.0 TB [MLP-H100] */
        .host_optimizer_workers = 16,          /* assumption (112 cores [MLP-H100]) */
        .host_adam_params_per_s = 1.4e9 / 16,  /* as A100: no per-core source, assumption */
    }};

/* H800: H100 compute and memory; NVLink cut to 400 GB/s bidirectional (200 per direction)
 * [NCCL-I1374], [FLASHMLA] (3.35 TB/s, 990 TFLOP/s for H800 SXM5). */
static const PpsimPreset preset_h800 = {
    .name = "dgx-h800-80gb",
    .summary = "DGX H800: 8x H800-SXM5-80GB (H100 compute), NVLink 200 GB/s per direction",
    .hw = {
        .gpus_per_node = 8,
        .gpu_memory_bytes = 80 * (guint64)GIB,
        HOPPER_KERNEL_MODEL,              /* dense BF16 989 TFLOP/s, as H100 [FLASHMLA] */
        .gpu_hbm_bytes_per_s = 3350 * GB, /* [FLASHMLA] */
        .copy_streams = 1,
        .nvlink_bytes_per_s = 200 * GB, /* 400 GB/s bidirectional [NCCL-I1374] */
        .nvlink_latency_ps = 2 * US,
        .nvlink_bus_efficiency = 0.8, /* 160 GB/s of 200 achieved [DSV3] §3.2.2 */
        .pcie_bytes_per_s = 64 * GB,
        .pcie_uplink_bytes_per_s = 64 * GB,
        .pcie_latency_ps = 5 * US,
        .pcie_gpus_per_switch = 1,
        .pcie_shared_efficiency = 1.0,
        .network_bytes_per_s = 50 * GB, /* InfiniBand 50 GB/s per GPU [DSV3] §3.2.2 */
        .network_latency_ps = 5 * US,
        .network_bus_efficiency = 0.92,
        .host_memory_bytes = 2 * (guint64)TIB,
        .host_optimizer_workers = 16,
        .host_adam_params_per_s = 1.4e9 / 16,
    }};

/* H200: the H100's Hopper compute (the same die, SMs, clocks and 700 W) with 141 GB of HBM3e
 * at 4.8 TB/s [H200-DS]; the memory as the driver reports it in MLPerf's H200 system
 * descriptions, 143,771 MiB [MLPERF-T50]; NVLink, NICs and host as the DGX H100 (the same
 * "NVLINK Gen4 900 GB/s" and 8 x 400 Gb/s ConnectX-7 [MLPERF-T50]). The fitted constants are
 * the H100's (same compute); MLPerf's two H200 runs check them (results/measured.md). */
static const PpsimPreset preset_h200 = {
    .name = "dgx-h200-141gb",
    .summary = "DGX H200: 8x H200-SXM5-141GB (H100 compute), HBM3e 4.8 TB/s",
    .hw = {
        .gpus_per_node = 8,
        .gpu_memory_bytes = 143771 * (guint64)1048576, /* 143,771 MiB [MLPERF-T50] */
        HOPPER_KERNEL_MODEL,                           /* as H100 [H200-DS] */
        .gpu_hbm_bytes_per_s = 4800 * GB,              /* 4.8 TB/s HBM3e [H200-DS] */
        .nvlink_bus_efficiency = 0.82,
        .network_bus_efficiency = 0.92,
        .copy_streams = 1,
        .nvlink_bytes_per_s = 450 * GB, /* 900 GB/s total [MLPERF-T50] */
        .nvlink_latency_ps = 2 * US,
        .pcie_bytes_per_s = 64 * GB,
        .pcie_uplink_bytes_per_s = 64 * GB,
        .pcie_latency_ps = 5 * US,
        .pcie_gpus_per_switch = 1,
        .pcie_shared_efficiency = 1.0,
        .network_bytes_per_s = 50 * GB, /* 8 x 400 Gb/s ConnectX-7 [MLPERF-T50] */
        .network_latency_ps = 5 * US,
        .host_memory_bytes = 2 * (guint64)TIB, /* as DGX H100: assumption */
        .host_optimizer_workers = 16,
        .host_adam_params_per_s = 1.4e9 / 16,
    }};

static const PpsimPreset *const presets[] = {&preset_a100, &preset_a100_40, &preset_h100,
                                             &preset_h800, &preset_h200,    NULL};

const PpsimPreset *const *
ppsim_presets(void)
{
    return presets;
}

const PpsimPreset *
ppsim_preset_lookup(const char *name)
{
    for (int i = 0; presets[i]; i++)
        if (strcmp(presets[i]->name, name) == 0)
            return presets[i];
    return NULL;
}
