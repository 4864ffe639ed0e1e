/* scenario-presets.c: hardware presets. Every number cites its source (README References); the ones
 * no source gives (latencies, worker counts) are stated assumptions. */
#include "scenario/scenario.h"

#include <string.h>

#define GB 1e9
#define GIB (1024.0 * 1024.0 * 1024.0)
#define TIB (1024.0 * GIB)
#define US PPSIM_PS_PER_US

static const PpsimPreset preset_a100 = {
    .name = "dgx-a100-80gb",
    .summary = "DGX A100: 8x A100-SXM4-80GB, NVSwitch, 2 GPUs per PCIe Gen4 switch",
    .hw = {
        .gpus_per_node = 8,                    /* [MLP-A100] */
        .gpu_memory_bytes = 80 * (guint64)GIB, /* 80 GB HBM2e [MLP-A100] */
        .gpu_peak_flops = 312e12,              /* dense 16-bit, [NAR21] §5 */
        .gpu_efficiency = 0.6,                 /* ~60% MFU, [PO] §4.3 */
        .copy_streams = 1,                     /* one shared D2H/H2D stream, [PO] §4.2 */
        .nvlink_bytes_per_s = 300 * GB,        /* 600 GB/s total = 300 per direction [MLP-A100] */
        .nvlink_latency_ps = 2 * US,           /* assumption */
        .pcie_bytes_per_s = 25 * GB,           /* measured ~25 GB/s per direction solo [FORUM] */
        .pcie_uplink_bytes_per_s = 30 * GB,    /* ~15 GB/s each when both GPUs of a switch
                                                * transfer: DERIVED */
        .pcie_latency_ps = 5 * US,             /* assumption */
        .pcie_gpus_per_switch = 2,             /* [VENG]; [PO] App. D Fig. 17 */
        .pcie_shared_efficiency = 1.0,         /* ideal sharing: [PO] App. D saw worse, but
                                                * its numbers are in images, not recoverable */
        .network_bytes_per_s = 25 * GB,        /* HDR 200 Gb/s per GPU [MLP-A100], [NAR21] §5 */
        .network_latency_ps = 5 * US,          /* assumption */
        .host_memory_bytes = 2 * (guint64)TIB, /* 2 TB [MLP-A100] */
        .host_optimizer_workers = 16,          /* assumption (128 cores per node [MLP-A100]) */
        .host_adam_params_per_s = 1.4e9 / 16,  /* ~1.4e9 params/s per node [DS-PR735];
                                                * rough, per worker */
    }};

static const PpsimPreset preset_h100 = {
    .name = "dgx-h100-80gb",
    .summary = "DGX H100: 8x H100-SXM5-80GB, NVSwitch, one PCIe Gen5 path per GPU",
    .hw = {
        .gpus_per_node = 8,                    /* [MLP-H100] */
        .gpu_memory_bytes = 80 * (guint64)GIB, /* 80 GB HBM3 [MLP-H100] */
        .gpu_peak_flops = 989e12,              /* dense BF16 [H100-DS] */
        .gpu_efficiency = 0.43,                /* 43% BF16 MFU, [L3] Table 4 */
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

/* The H800 cluster of [DSV3] §3.1-3.2.2: 8 GPUs per node on NVLink/NVSwitch at 160 GB/s,
 * InfiniBand at 50 GB/s per GPU across nodes; the H800 computes as the H100 (the export
 * variant cuts NVLink, not the SMs), so compute, memory and host numbers are the H100's. */
static const PpsimPreset preset_h800 = {
    .name = "dgx-h800-80gb",
    .summary = "H800 node as in DeepSeek-V3: 8x H800-80GB, NVLink 160 GB/s, IB 50 GB/s per GPU",
    .hw = {
        .gpus_per_node = 8,                    /* [DSV3] §3.1 */
        .gpu_memory_bytes = 80 * (guint64)GIB, /* as H100 */
        .gpu_peak_flops = 989e12,              /* as H100, dense BF16 [H100-DS] */
        .gpu_efficiency = 0.43,                /* as H100 (assumption) */
        .copy_streams = 1,
        .nvlink_bytes_per_s = 160 * GB, /* [DSV3] §3.2.2 */
        .nvlink_latency_ps = 2 * US,    /* assumption */
        .pcie_bytes_per_s = 64 * GB,    /* as H100 */
        .pcie_uplink_bytes_per_s = 64 * GB,
        .pcie_latency_ps = 5 * US, /* assumption */
        .pcie_gpus_per_switch = 1, /* as H100 */
        .pcie_shared_efficiency = 1.0,
        .network_bytes_per_s = 50 * GB,        /* IB, [DSV3] §3.2.2 */
        .network_latency_ps = 5 * US,          /* assumption */
        .host_memory_bytes = 2 * (guint64)TIB, /* as H100 (assumption) */
        .host_optimizer_workers = 16,          /* assumption */
        .host_adam_params_per_s = 1.4e9 / 16,  /* as A100: assumption */
    }};

static const PpsimPreset *const presets[] = {&preset_a100, &preset_h100, &preset_h800, NULL};

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
