/* scenario-frameworks.c: training frameworks (scenario key `framework`), each the settings most
 * of its published performance runs share, taken from the measured runs' own configurations
 * (scenarios/measured/ quotes each; results/measured.md). A framework sets the keys a
 * scenario leaves unwritten, so a run described by its layout alone runs as its stack runs
 * it; a written key always wins.
 *
 * megatron-core: Megatron-LM on Megatron-Core as its scaling table ([MCORE-WS]) and the MoE
 * model zoo's scripts ([MOE-ZOO]) launch it: --sequence-parallel, --use-distributed-optimizer,
 * --overlap-grad-reduce, --overlap-param-gather; with bf16 weights and fp32 main gradients
 * Megatron-LM accumulates and reduces the gradients in fp32 ([MEG]
 * `megatron/training/arguments.py`, core_r0.8.0 to core_v0.16.0: accumulate_allreduce_grads_
 * in_fp32 forced on). Its TP overlap (--tp-comm-overlap) is opt-in and not set.
 * nemo: NeMo (1.x on Megatron-Core, 2.x) and Megatron-Bridge as NVIDIA's performance recipes
 * run them ([DGXC], [NEMO-PS2407], [MLPERF-T30] to [MLPERF-T50], [MB-PS]): sequence
 * parallelism, the distributed optimizer with the gradients' reduce-scatter overlapped with
 * the backward and the weights' all-gather with the next forward, Transformer Engine's TP
 * overlap (ub_tp_comm_overlap / tp_comm_overlap), and bf16 gradients held (Apex's
 * DistributedFusedAdam with `grad_sync_dtype: bf16`, [APEX] `distributed_fused_adam.py`; NeMo
 * 2's performance mode `grad_reduce_in_fp32: False`).
 * deepspeed: Megatron-DeepSpeed on DeepSpeed's pipeline engine ([MTNLG], [NEOX], [GLM130B]):
 * ZeRO stage 1, the gradients reduced after the last backward ([DS-P2P] pipe/engine.py), the
 * column-parallel linears' input gradient all-reduced before the backward goes on (its
 * `mpu/layers.py`), each microbatch's gradients added by autograd into .grad.
 * fsdp2: PyTorch FSDP2 ([TITAN], [AUTOMODEL]): ZeRO-3 with each gather copied out into the
 * parameters (zero3_layout: per_param).
 * llm-foundry: MosaicML's LLM Foundry on Composer and PyTorch FSDP (the first, FlatParameter
 * one) as its benchmark table ran it ([MPT-BENCH]): FULL_SHARD (ZeRO-3, one flat buffer a
 * block), Composer's DEFAULT mixed precision (bf16 weights gathered, gradients reduced in fp32:
 * composer/trainer/mosaic_fsdp_utils.py `get_mixed_precision`), and its Triton
 * FlashAttention (`attn_impl: triton`, the model yamls' and the benchmark script's default),
 * a first-generation FlashAttention kernel, and its optimizer, Composer's DecoupledAdamW, an
 * Adam of PyTorch ops (composer/optim/decoupled_weight_decay.py). */
#include "scenario/scenario.h"

#include <string.h>

const char *const ppsim_framework_names[] = {"none",  "megatron-core", "nemo", "deepspeed",
                                             "fsdp2", "llm-foundry",   NULL};

static const PpsimFrameworkSetting megatron_core[] = {
    {"parallel.sequence_parallel", "true", PPSIM_FW_TP},
    {"parallel.zero", "1", PPSIM_FW_ALWAYS},
    {"parallel.overlap_grad_reduce", "true", PPSIM_FW_ALWAYS},
    {"parallel.overlap_param_gather", "true", PPSIM_FW_ZERO_1_2},
    {"parallel.grad_reduce_dtype", "fp32", PPSIM_FW_ALWAYS},
    {NULL}};

static const PpsimFrameworkSetting nemo[] = {
    {"parallel.sequence_parallel", "true", PPSIM_FW_TP},
    {"parallel.zero", "1", PPSIM_FW_ALWAYS},
    {"parallel.overlap_grad_reduce", "true", PPSIM_FW_ALWAYS},
    {"parallel.overlap_param_gather", "true", PPSIM_FW_ZERO_1_2},
    {"parallel.tp_comm_overlap", "true", PPSIM_FW_SP},
    {"training.main_grads", "bf16", PPSIM_FW_ALWAYS},
    {NULL}};

static const PpsimFrameworkSetting deepspeed[] = {
    {"parallel.zero", "1", PPSIM_FW_ALWAYS},
    {"parallel.overlap_grad_reduce", "false", PPSIM_FW_ALWAYS},
    {"parallel.tp_async_backward", "false", PPSIM_FW_ALWAYS},
    {"training.grad_accumulation", "autograd", PPSIM_FW_ALWAYS},
    {NULL}};

static const PpsimFrameworkSetting fsdp2[] = {
    {"parallel.zero", "3", PPSIM_FW_ALWAYS},
    {"parallel.zero3_layout", "per_param", PPSIM_FW_ALWAYS},
    {NULL}};

static const PpsimFrameworkSetting llm_foundry[] = {
    {"parallel.zero", "3", PPSIM_FW_ALWAYS},
    {"parallel.zero3_layout", "flat", PPSIM_FW_ALWAYS},
    {"parallel.grad_reduce_dtype", "fp32", PPSIM_FW_ALWAYS},
    {"model.attention_kernel", "fa1", PPSIM_FW_FLASH},
    {"training.optimizer", "eager", PPSIM_FW_ALWAYS},
    {NULL}};

static const PpsimFramework frameworks[] = {
    {"megatron-core", "Megatron-LM on Megatron-Core, as its scaling runs launch it",
     "[MCORE-WS], [MOE-ZOO], [MEG] arguments.py", megatron_core},
    {"nemo", "NeMo and Megatron-Bridge, as NVIDIA's performance recipes run them",
     "[DGXC], [NEMO-PS2407], [MLPERF-T30]..[MLPERF-T50], [MB-PS], [APEX]", nemo},
    {"deepspeed", "Megatron-DeepSpeed on DeepSpeed's pipeline engine",
     "[MTNLG], [NEOX], [GLM130B], [DS-P2P]", deepspeed},
    {"fsdp2", "PyTorch FSDP2 (TorchTitan, NeMo AutoModel)", "[TITAN], [AUTOMODEL]", fsdp2},
    {"llm-foundry",
     "MosaicML's LLM Foundry on Composer and PyTorch FSDP, as its 2023 benchmarks ran",
     "[MPT-BENCH]", llm_foundry},
    {NULL}};

const PpsimFramework *
ppsim_framework_nth(int index)
{
    return index >= 1 && index <= (int)G_N_ELEMENTS(frameworks) - 1 ? &frameworks[index - 1] : NULL;
}

const char *
ppsim_framework_when_text(PpsimFrameworkWhen when)
{
    switch (when) {
    case PPSIM_FW_TP:
        return "with parallel.tp > 1";
    case PPSIM_FW_SP:
        return "with parallel.tp > 1 and sequence parallelism";
    case PPSIM_FW_ZERO_1_2:
        return "with parallel.zero 1 or 2";
    case PPSIM_FW_FLASH:
        return "with model.flash_attention";
    default:
        return NULL;
    }
}

const char *
ppsim_framework_that_set(const PpsimScenario *sc, const char *key)
{
    const PpsimFramework *fw = ppsim_framework_nth(sc->framework);
    for (guint i = 0; fw != NULL && fw->settings[i].key != NULL; i++)
        if ((sc->framework_applied & (1u << i)) && strcmp(fw->settings[i].key, key) == 0)
            return fw->name;
    return NULL;
}
