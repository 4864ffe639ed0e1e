/* scenario-schema.c: key tables, defaults and cross-field checks of scenario files
 * (scenarios/README.md). The one place where keys and defaults are declared. */
#include "scenario/scenario-schema.h"
#include "util/ppsim-error.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define OFF(field) offsetof(PpsimScenario, field)
#define SECTION(n, table)                                                                          \
    {                                                                                              \
        n, KEY_SECTION, 0, table, FALSE, 0, 0                                                      \
    }
#define POS_INT(n, field)                                                                          \
    {                                                                                              \
        n, KEY_INT, OFF(field), NULL, FALSE, 1, 0                                                  \
    }
#define REQ_INT(n, field)                                                                          \
    {                                                                                              \
        n, KEY_INT, OFF(field), NULL, TRUE, 1, 0                                                   \
    }
#define QTY(n, type, field)                                                                        \
    {                                                                                              \
        n, type, OFF(field), NULL, FALSE, 0, 0                                                     \
    }

static const SchemaKey gpu_keys[] = {
    QTY("memory", KEY_BYTES, hardware.gpu_memory_bytes),
    QTY("peak_flops", KEY_FLOPS, hardware.gpu_peak_flops),
    {"efficiency", KEY_DOUBLE, OFF(hardware.gpu_efficiency), NULL, FALSE, 1e-9, 1},
    {"copy_streams", KEY_INT, OFF(hardware.copy_streams), NULL, FALSE, 1, 2},
    {"sms", KEY_INT, OFF(hardware.gpu_sms), NULL, FALSE, 0, 0},
    QTY("hbm_bandwidth", KEY_BANDWIDTH, hardware.gpu_hbm_bytes_per_s),
    QTY("peak_flops_fp8", KEY_FLOPS, hardware.gpu_peak_flops_fp8),
    {"gemm_efficiency", KEY_DOUBLE, OFF(hardware.gpu_gemm_efficiency), NULL, FALSE, 0, 1},
    {"gemm_efficiency_fp8", KEY_DOUBLE, OFF(hardware.gpu_gemm_efficiency_fp8), NULL, FALSE, 0, 1},
    {"attention_efficiency", KEY_DOUBLE, OFF(hardware.gpu_attention_efficiency), NULL, FALSE, 0, 1},
    {"attention_efficiency_cudnn", KEY_DOUBLE, OFF(hardware.gpu_attention_efficiency_cudnn), NULL,
     FALSE, 0, 1},
    {"attention_efficiency_fa1_backward", KEY_DOUBLE,
     OFF(hardware.gpu_attention_efficiency_fa1_backward), NULL, FALSE, 0, 1},
    {"attention_efficiency_fa1", KEY_DOUBLE, OFF(hardware.gpu_attention_efficiency_fa1), NULL,
     FALSE, 0, 1},
    {"attention_efficiency_fa2", KEY_DOUBLE, OFF(hardware.gpu_attention_efficiency_fa2), NULL,
     FALSE, 0, 1},
    {"attention_efficiency_fa3", KEY_DOUBLE, OFF(hardware.gpu_attention_efficiency_fa3), NULL,
     FALSE, 0, 1},
    {"memory_efficiency", KEY_DOUBLE, OFF(hardware.gpu_memory_efficiency), NULL, FALSE, 0, 1},
    {"tile_m", KEY_INT, OFF(hardware.gpu_tile_m), NULL, FALSE, 0, 0},
    {"tile_n", KEY_INT, OFF(hardware.gpu_tile_n), NULL, FALSE, 0, 0},
    {"gemm_k_overhead", KEY_DOUBLE, OFF(hardware.gpu_gemm_k_overhead), NULL, FALSE, 0, 0},
    QTY("launch_overhead", KEY_TIME, hardware.gpu_launch_ps),
    {NULL}};

static const SchemaKey nvlink_keys[] = {
    QTY("bandwidth", KEY_BANDWIDTH, hardware.nvlink_bytes_per_s),
    QTY("latency", KEY_TIME, hardware.nvlink_latency_ps),
    {"bus_efficiency", KEY_DOUBLE, OFF(hardware.nvlink_bus_efficiency), NULL, FALSE, 0, 1},
    {NULL}};

static const SchemaKey pcie_keys[] = {
    QTY("bandwidth", KEY_BANDWIDTH, hardware.pcie_bytes_per_s),
    QTY("uplink_bandwidth", KEY_BANDWIDTH, hardware.pcie_uplink_bytes_per_s),
    QTY("latency", KEY_TIME, hardware.pcie_latency_ps),
    POS_INT("gpus_per_switch", hardware.pcie_gpus_per_switch),
    {"shared_efficiency", KEY_DOUBLE, OFF(hardware.pcie_shared_efficiency), NULL, FALSE, 1e-9, 1},
    {NULL}};

static const SchemaKey network_keys[] = {
    QTY("bandwidth", KEY_BANDWIDTH, hardware.network_bytes_per_s),
    QTY("latency", KEY_TIME, hardware.network_latency_ps),
    {"bus_efficiency", KEY_DOUBLE, OFF(hardware.network_bus_efficiency), NULL, FALSE, 0, 1},
    {NULL}};

static const SchemaKey host_keys[] = {QTY("memory", KEY_BYTES, hardware.host_memory_bytes),
                                      POS_INT("optimizer_workers", hardware.host_optimizer_workers),
                                      QTY("adam_rate", KEY_COUNT, hardware.host_adam_params_per_s),
                                      {NULL}};

static const SchemaKey hardware_keys[] = {{"preset", KEY_SPECIAL, 0, NULL, FALSE, 0, 0},
                                          POS_INT("nodes", hardware.nodes),
                                          POS_INT("gpus_per_node", hardware.gpus_per_node),
                                          SECTION("gpu", gpu_keys),
                                          SECTION("nvlink", nvlink_keys),
                                          SECTION("pcie", pcie_keys),
                                          SECTION("network", network_keys),
                                          SECTION("host", host_keys),
                                          {NULL}};

static const char *const mlp_names[] = {"gelu", "swiglu", NULL};
static const char *const placement_names[] = {"tp-pp-dp", "tp-dp-pp", NULL};
static const char *const dtype_names[] = {"bf16", "fp8", NULL};
static const char *const fp8_recipe_names[] = {"delayed", "current", "blockwise", NULL};
static const char *const model_flag_names[] = {"default", "true", "false", NULL};
static const char *const cross_entropy_names[] = {"unfused", "native", "te", NULL};
static const char *const attention_kernel_names[] = {"default", "cudnn", "fa1", "fa2", "fa3", NULL};
static const char *const elementwise_names[] = {"fused", "eager", NULL};
static const char *const p2p_names[] = {"async", "blocking", "overlapped", NULL};
static const char *const ep_dispatch_names[] = {"alltoall", "deepep", NULL};
static const char *const grad_reduce_names[] = {"bf16", "fp32", NULL};
static const char *const zero3_layout_names[] = {"flat", "per_param", NULL};
static const char *const grad_sync_names[] = {"reduce_scatter", "all_reduce", NULL};

const char *
ppsim_p2p_name(PpsimP2p p2p)
{
    return p2p_names[p2p];
}

gboolean
ppsim_model_dropout(const PpsimModel *m)
{
    if (m->dropout != PPSIM_MODEL_FLAG_DEFAULT)
        return m->dropout == PPSIM_MODEL_FLAG_TRUE;
    return m->mlp != PPSIM_MLP_SWIGLU;
}

double
ppsim_model_q_width(const PpsimModel *m)
{
    return m->head_dim > 0 ? (double)m->head_dim * m->heads : (double)m->hidden;
}

double
ppsim_model_kv_width(const PpsimModel *m)
{
    if (m->head_dim > 0)
        return (double)m->head_dim * m->kv_heads;
    return (double)m->hidden * ((double)m->kv_heads / (double)m->heads);
}

void
ppsim_model_attn_shape(const PpsimModel *m, PpsimAttnShape *out)
{
    *out = (PpsimAttnShape){0};
    double h = m->hidden, a = m->heads;
    const PpsimMla *mla = &m->mla;
#define LINEAR(o, i, how)                                                                          \
    out->linear[out->n_linear].out = (o);                                                          \
    out->linear[out->n_linear].in = (i);                                                           \
    out->linear[out->n_linear++].split = (how)
    if (mla->kv_lora_rank <= 0) {
        double q = ppsim_model_q_width(m), kv = ppsim_model_kv_width(m);
        LINEAR(q + 2.0 * kv, h, PPSIM_ATTN_COLUMN);
        LINEAR(h, q, PPSIM_ATTN_ROW);
        out->qk = out->out = q;
        out->k = out->v = kv;
        out->gather = h;
    } else {
        double ql = mla->q_lora_rank, kl = mla->kv_lora_rank, dr = mla->qk_rope_head_dim;
        double dqk = mla->qk_nope_head_dim + dr, dv = mla->v_head_dim;
        if (ql > 0) {
            LINEAR(ql, h, PPSIM_ATTN_DUPLICATED);
            LINEAR(a * dqk, ql, PPSIM_ATTN_COLUMN);
        } else {
            LINEAR(a * dqk, h, PPSIM_ATTN_COLUMN);
        }
        LINEAR(kl + dr, h, PPSIM_ATTN_DUPLICATED);
        LINEAR(a * (mla->qk_nope_head_dim + dv), kl, PPSIM_ATTN_COLUMN);
        LINEAR(h, a * dv, PPSIM_ATTN_ROW);
        out->qk = out->k = a * dqk;
        out->v = out->out = a * dv;
        out->latent = ql + kl;
        out->rope_k = dr;
        out->gather = (ql > 0 ? ql : h) + kl + dr;
    }
#undef LINEAR
    for (int i = 0; i < out->n_linear; i++)
        out->params += out->linear[i].out * out->linear[i].in;
    out->params += out->latent;
}

double
ppsim_model_mla_up_params(const PpsimModel *m)
{
    if (m->mla.kv_lora_rank <= 0)
        return 0.0;
    PpsimAttnShape sh;
    ppsim_model_attn_shape(m, &sh);
    double up = 0.0;
    for (int i = 0; i < sh.n_linear; i++)
        if (sh.linear[i].split == PPSIM_ATTN_COLUMN)
            up += sh.linear[i].out * sh.linear[i].in;
    return up;
}

double
ppsim_model_attn_linear_flops(const PpsimModel *m)
{
    PpsimAttnShape sh;
    ppsim_model_attn_shape(m, &sh);
    return 2.0 * (sh.params - sh.latent);
}

int
ppsim_model_window_layers_in(const PpsimModel *m, int first, int n)
{
    if (m->sliding_window <= 0 || m->sliding_window >= m->seq_len || n <= 0)
        return 0;
    int k = m->full_attention_every;
    if (k <= 0)
        return n;
    /* layers numbered first + 1 .. first + n, less the multiples of k among them */
    return n - ((first + n) / k - first / k);
}

gboolean
ppsim_model_rotary(const PpsimModel *m)
{
    if (m->rotary != PPSIM_MODEL_FLAG_DEFAULT)
        return m->rotary == PPSIM_MODEL_FLAG_TRUE;
    return m->mlp == PPSIM_MLP_SWIGLU;
}

const char *
ppsim_attention_kernel_name(PpsimAttentionKernel k)
{
    return attention_kernel_names[k];
}

double
ppsim_attention_efficiency(const PpsimHardware *hw, PpsimAttentionKernel k, const char **key)
{
    const char *name;
    double eff;
    switch (k) {
    case PPSIM_ATTN_CUDNN:
        name = "hardware.gpu.attention_efficiency_cudnn";
        eff = hw->gpu_attention_efficiency_cudnn;
        break;
    case PPSIM_ATTN_FA1:
        name = "hardware.gpu.attention_efficiency_fa1";
        eff = hw->gpu_attention_efficiency_fa1;
        break;
    case PPSIM_ATTN_FA2:
        name = "hardware.gpu.attention_efficiency_fa2";
        eff = hw->gpu_attention_efficiency_fa2;
        break;
    case PPSIM_ATTN_FA3:
        name = "hardware.gpu.attention_efficiency_fa3";
        eff = hw->gpu_attention_efficiency_fa3;
        break;
    default:
        name = "hardware.gpu.attention_efficiency";
        eff = hw->gpu_attention_efficiency;
        break;
    }
    if (key != NULL)
        *key = name;
    return eff;
}

double
ppsim_attention_backward_efficiency(const PpsimHardware *hw, PpsimAttentionKernel k)
{
    return k == PPSIM_ATTN_FA1 ? hw->gpu_attention_efficiency_fa1_backward : 0.0;
}

static const SchemaKey moe_keys[] = {
    REQ_INT("experts", model.moe.experts),
    REQ_INT("top_k", model.moe.top_k),
    REQ_INT("expert_ffn_hidden", model.moe.expert_ffn_hidden),
    {"shared_experts", KEY_INT, OFF(model.moe.shared_experts), NULL, FALSE, 0, 0},
    {"dense_layers", KEY_INT, OFF(model.moe.dense_layers), NULL, FALSE, 0, 0},
    {"capacity_factor", KEY_DOUBLE, OFF(model.moe.capacity_factor), NULL, FALSE, 0, 0},
    {"imbalance", KEY_DOUBLE, OFF(model.moe.imbalance), NULL, FALSE, 1, 0},
    {"groups", KEY_INT, OFF(model.moe.groups), NULL, FALSE, 0, 0},
    {"group_top_k", KEY_INT, OFF(model.moe.group_top_k), NULL, FALSE, 0, 0},
    {NULL}};
static const SchemaKey mla_keys[] = {
    {"q_lora_rank", KEY_INT, OFF(model.mla.q_lora_rank), NULL, FALSE, 0, 0},
    {"kv_lora_rank", KEY_INT, OFF(model.mla.kv_lora_rank), NULL, TRUE, 0, 0},
    REQ_INT("qk_nope_head_dim", model.mla.qk_nope_head_dim),
    {"qk_rope_head_dim", KEY_INT, OFF(model.mla.qk_rope_head_dim), NULL, TRUE, 0, 0},
    REQ_INT("v_head_dim", model.mla.v_head_dim),
    {NULL}};
static const char *const main_grads_names[] = {"fp32", "bf16", NULL};
static const char *const grad_accumulation_names[] = {"fused", "autograd", "add", "cast_add", NULL};
static const char *const optimizer_names[] = {"fused", "eager", NULL};

static const SchemaKey model_keys[] = {
    {"preset", KEY_SPECIAL, 0, NULL, FALSE, 0, 0},
    {"mlp", KEY_ENUM, OFF(model.mlp), NULL, FALSE, 0, 0, mlp_names},
    REQ_INT("layers", model.layers),
    REQ_INT("hidden", model.hidden),
    POS_INT("ffn_hidden", model.ffn_hidden),
    REQ_INT("heads", model.heads),
    POS_INT("kv_heads", model.kv_heads),
    POS_INT("head_dim", model.head_dim),
    REQ_INT("seq_len", model.seq_len),
    POS_INT("vocab", model.vocab),
    {"flash_attention", KEY_BOOL, OFF(model.flash_attention), NULL, FALSE, 0, 0},
    {"causal", KEY_BOOL, OFF(model.causal), NULL, FALSE, 0, 0},
    {"sliding_window", KEY_INT, OFF(model.sliding_window), NULL, FALSE, 0, 0},
    {"full_attention_every", KEY_INT, OFF(model.full_attention_every), NULL, FALSE, 0, 0},
    {"dropout", KEY_ENUM, OFF(model.dropout), NULL, FALSE, 0, 0, model_flag_names},
    {"rotary", KEY_ENUM, OFF(model.rotary), NULL, FALSE, 0, 0, model_flag_names},
    {"tied_embeddings", KEY_BOOL, OFF(model.tied_embeddings), NULL, FALSE, 0, 0},
    {"mtp_layers", KEY_INT, OFF(model.mtp_layers), NULL, FALSE, 0, 0},
    {"cross_entropy", KEY_ENUM, OFF(model.cross_entropy), NULL, FALSE, 0, 0, cross_entropy_names},
    {"attention_kernel", KEY_ENUM, OFF(model.attention_kernel), NULL, FALSE, 0, 0,
     attention_kernel_names},
    {"elementwise", KEY_ENUM, OFF(model.elementwise), NULL, FALSE, 0, 0, elementwise_names},
    {"recompute", KEY_RECOMPUTE, OFF(model.recompute), NULL, FALSE, 0, 0},
    {"stage_layers", KEY_INT_LIST, OFF(model.stage_layers), NULL, FALSE, 0, 0},
    {"stage_recompute", KEY_RECOMPUTE_LIST, OFF(model.stage_recompute), NULL, FALSE, 0, 0},
    SECTION("moe", moe_keys),
    SECTION("mla", mla_keys),
    {NULL}};

static const SchemaKey training_keys[] = {
    REQ_INT("pp", training.pp),
    POS_INT("chunks", training.chunks),
    REQ_INT("microbatches", training.microbatches),
    POS_INT("microbatch_size", training.microbatch_size),
    POS_INT("global_batch", training.global_batch),
    {"bytes_per_param", KEY_DOUBLE, OFF(training.bytes_per_param), NULL, FALSE, 0, 0},
    {"dtype", KEY_ENUM, OFF(training.dtype), NULL, FALSE, 0, 0, dtype_names},
    {"fp8_recipe", KEY_ENUM, OFF(training.fp8_recipe), NULL, FALSE, 0, 0, fp8_recipe_names},
    {"fp8_weights", KEY_BOOL, OFF(training.fp8_weights), NULL, FALSE, 0, 0},
    {"main_grads", KEY_ENUM, OFF(training.main_grads), NULL, FALSE, 0, 0, main_grads_names},
    {"grad_accumulation", KEY_ENUM, OFF(training.grad_accumulation), NULL, FALSE, 0, 0,
     grad_accumulation_names},
    {"optimizer", KEY_ENUM, OFF(training.optimizer), NULL, FALSE, 0, 0, optimizer_names},
    {NULL}};

static const SchemaKey parallel_keys[] = {
    POS_INT("tp", parallel.tp),
    POS_INT("pp", parallel.pp),
    POS_INT("dp", parallel.dp),
    {"sequence_parallel", KEY_BOOL, OFF(parallel.sequence_parallel), NULL, FALSE, 0, 0},
    {"zero", KEY_INT, OFF(parallel.zero), NULL, FALSE, 0, 3},
    {"placement", KEY_ENUM, OFF(parallel.placement), NULL, FALSE, 0, 0, placement_names},
    {"tp_efficiency", KEY_DOUBLE, OFF(parallel.tp_efficiency), NULL, FALSE, 1e-9, 1},
    POS_INT("ep", parallel.ep),
    POS_INT("etp", parallel.etp),
    POS_INT("cp", parallel.cp),
    {"tp_comm_overlap", KEY_BOOL, OFF(parallel.tp_comm_overlap), NULL, FALSE, 0, 0},
    {"ep_fp8_dispatch", KEY_BOOL, OFF(parallel.ep_fp8_dispatch), NULL, FALSE, 0, 0},
    {"tp_async_backward", KEY_BOOL, OFF(parallel.tp_async_backward), NULL, FALSE, 0, 0},
    {"overlap_grad_reduce", KEY_BOOL, OFF(parallel.overlap_grad_reduce), NULL, FALSE, 0, 0},
    {"overlap_param_gather", KEY_BOOL, OFF(parallel.overlap_param_gather), NULL, FALSE, 0, 0},
    {"grad_reduce_dtype", KEY_ENUM, OFF(parallel.grad_reduce_dtype), NULL, FALSE, 0, 0,
     grad_reduce_names},
    {"zero3_layout", KEY_ENUM, OFF(parallel.zero3_layout), NULL, FALSE, 0, 0, zero3_layout_names},
    {"grad_sync", KEY_ENUM, OFF(parallel.grad_sync), NULL, FALSE, 0, 0, grad_sync_names},
    {"p2p", KEY_ENUM, OFF(parallel.p2p), NULL, FALSE, 0, 0, p2p_names},
    {"ep_dispatch", KEY_ENUM, OFF(parallel.ep_dispatch), NULL, FALSE, 0, 0, ep_dispatch_names},
    {"ep_comm_sms", KEY_INT, OFF(parallel.ep_comm_sms), NULL, FALSE, 0, 0},
    {NULL}};

static const SchemaKey memory_keys[] = {
    {"limit", KEY_SPECIAL, 0, NULL, FALSE, 0, 0},
    {"fragmentation", KEY_DOUBLE, OFF(memory_fragmentation), NULL, FALSE, 0, 1},
    QTY("reserved", KEY_BYTES, memory_reserved_bytes),
    {NULL}};

static const SchemaKey costs_keys[] = {
    QTY("forward", KEY_TIME_MS, costs.forward_ps),
    QTY("backward_input", KEY_TIME_MS, costs.backward_input_ps),
    QTY("backward_weight", KEY_TIME_MS, costs.backward_weight_ps),
    QTY("p2p", KEY_TIME_MS, costs.p2p_ps),
    QTY("offload", KEY_TIME_MS, costs.offload_ps),
    QTY("recompute", KEY_TIME_MS, costs.recompute_ps),
    QTY("optimizer", KEY_TIME_MS, costs.optimizer_ps),
    QTY("forward_backward", KEY_TIME_MS, costs.forward_backward_ps),
    {"activation", KEY_DOUBLE, OFF(costs.activation), NULL, FALSE, 0, 0},
    {"weight_activation", KEY_DOUBLE, OFF(costs.weight_activation), NULL, FALSE, 0, 0},
    {"stage_forward", KEY_DOUBLE_LIST, OFF(costs.stage_forward), NULL, FALSE, 0, 0},
    {"stage_backward_input", KEY_DOUBLE_LIST, OFF(costs.stage_backward_input), NULL, FALSE, 0, 0},
    {"stage_backward_weight", KEY_DOUBLE_LIST, OFF(costs.stage_backward_weight), NULL, FALSE, 0, 0},
    {"stage_activation", KEY_DOUBLE_LIST, OFF(costs.stage_activation), NULL, FALSE, 0, 0},
    {NULL}};

#define CV(n, kind)                                                                                \
    {                                                                                              \
        n, KEY_DOUBLE, OFF(variability.cv_kind[kind]), NULL, FALSE, 0, 0                           \
    }
static const SchemaKey variability_keys[] = {
    {"cv", KEY_DOUBLE, OFF(variability.cv), NULL, FALSE, 0, 0},
    CV("cv_forward", PPSIM_NOISE_FORWARD),
    CV("cv_backward", PPSIM_NOISE_BACKWARD),
    CV("cv_weight", PPSIM_NOISE_WEIGHT),
    CV("cv_recompute", PPSIM_NOISE_RECOMPUTE),
    CV("cv_optimizer", PPSIM_NOISE_OPTIMIZER),
    CV("cv_offload", PPSIM_NOISE_OFFLOAD),
    CV("cv_comm", PPSIM_NOISE_COMM),
    {"devices", KEY_SPECIAL, 0, NULL, FALSE, 0, 0},
    {"links", KEY_SPECIAL, 0, NULL, FALSE, 0, 0},
    {"events", KEY_SPECIAL, 0, NULL, FALSE, 0, 0},
    {"dp_exact", KEY_INT, OFF(variability.dp_exact), NULL, FALSE, 1, 4096},
    {NULL}};

const SchemaKey ppsim_scenario_schema[] = {
    {"name", KEY_STRING, OFF(name), NULL, FALSE, 0, 0},
    SECTION("hardware", hardware_keys),
    SECTION("model", model_keys),
    SECTION("training", training_keys),
    {"schedule", KEY_SPECIAL, 0, NULL, FALSE, 0, 0},
    SECTION("memory", memory_keys),
    SECTION("costs", costs_keys),
    SECTION("parallel", parallel_keys),
    SECTION("variability", variability_keys),
    {"framework", KEY_ENUM, OFF(framework), NULL, FALSE, 0, 0, ppsim_framework_names},
    {NULL}};

void
ppsim_scenario_set_defaults(PpsimScenario *sc)
{
    sc->hardware = ppsim_preset_lookup("dgx-a100-80gb")->hw;
    sc->hardware.preset = g_strdup("dgx-a100-80gb");
    sc->model.vocab = 51200;
    sc->model.flash_attention = TRUE;
    sc->model.causal = TRUE;
    sc->model.recompute = PPSIM_RECOMPUTE_NONE;
    sc->training.chunks = 1;
    sc->training.microbatch_size = 1;
    sc->training.main_grads = PPSIM_MAIN_GRADS_FP32;
    sc->training.grad_accumulation = PPSIM_GRAD_ACCUM_FUSED;
    sc->training.optimizer = PPSIM_OPTIMIZER_FUSED;
    sc->memory_fragmentation = PPSIM_MEMORY_FRAGMENTATION_DEFAULT;
    sc->memory_reserved_bytes = PPSIM_MEMORY_RESERVED_DEFAULT;
    sc->parallel.tp = sc->parallel.dp = sc->parallel.ep = sc->parallel.etp = sc->parallel.cp = 1;
    sc->model.moe.imbalance = 1.0;
    sc->parallel.overlap_grad_reduce = TRUE;
    sc->parallel.tp_async_backward = TRUE;
    sc->parallel.ep_comm_sms = -1;                     /* by dispatch */
    sc->parallel.placement = PPSIM_PLACEMENT_TP_DP_PP; /* Megatron-LM's rank order */
    sc->parallel.tp_efficiency = 1.0;
    sc->costs.forward_ps = sc->costs.backward_input_ps = sc->costs.backward_weight_ps =
        PPSIM_PS_PER_MS;
    sc->costs.activation = 1;
    for (int k = 0; k < PPSIM_NOISE_N_KINDS; k++)
        sc->variability.cv_kind[k] = -1;
    sc->variability.dp_exact = 64;
}

/* The key (not a section) at dotted @path of the scenario tables, or NULL. */
static const SchemaKey *
schema_key_at(const char *path)
{
    g_auto(GStrv) parts = g_strsplit(path, ".", -1);
    const SchemaKey *table = ppsim_scenario_schema;
    for (int i = 0; parts[i] != NULL; i++) {
        const SchemaKey *k = table;
        while (k->name != NULL && strcmp(k->name, parts[i]) != 0)
            k++;
        if (k->name == NULL)
            return NULL;
        if (k->type != KEY_SECTION)
            return parts[i + 1] == NULL ? k : NULL;
        table = k->section;
    }
    return NULL;
}

/* Sets the bool, int or enum key at dotted @path to @value, written as a scenario writes
 * it (a framework's settings: every one is checked by tests/check-scenario.c). */
static void
set_key_text(PpsimScenario *sc, const char *path, const char *value)
{
    const SchemaKey *k = schema_key_at(path);
    g_assert(k != NULL);
    void *dst = (char *)sc + k->offset;
    if (k->type == KEY_BOOL) {
        *(gboolean *)dst = strcmp(value, "true") == 0;
    } else if (k->type == KEY_INT) {
        *(int *)dst = atoi(value);
    } else {
        g_assert(k->type == KEY_ENUM);
        int i = 0;
        while (k->names[i] != NULL && strcmp(k->names[i], value) != 0)
            i++;
        g_assert(k->names[i] != NULL);
        *(int *)dst = i;
    }
}

/* The scenario's framework: each of its settings whose key the scenario does not write and
 * whose condition holds, in order (a later condition sees an earlier setting). The
 * `parallel.` ones only with a layout. */
static void
apply_framework(PpsimScenario *sc, GHashTable *seen)
{
    const PpsimFramework *fw = ppsim_framework_nth(sc->framework);
    const PpsimParallel *par = &sc->parallel;
    sc->framework_applied = 0;
    for (guint i = 0; fw != NULL && fw->settings[i].key != NULL; i++) {
        const PpsimFrameworkSetting *s = &fw->settings[i];
        if (g_hash_table_contains(seen, s->key) ||
            (g_str_has_prefix(s->key, "parallel.") && !par->present))
            continue;
        gboolean holds = s->when == PPSIM_FW_ALWAYS || (s->when == PPSIM_FW_TP && par->tp > 1) ||
                         (s->when == PPSIM_FW_SP && par->tp > 1 && par->sequence_parallel) ||
                         (s->when == PPSIM_FW_ZERO_1_2 && (par->zero == 1 || par->zero == 2)) ||
                         (s->when == PPSIM_FW_FLASH && sc->model.flash_attention);
        if (holds) {
            set_key_text(sc, s->key, s->value);
            sc->framework_applied |= 1u << i;
        }
    }
}

void
ppsim_scenario_finish_defaults(PpsimScenario *sc, GHashTable *seen)
{
    PpsimModel *m = &sc->model;
    gboolean preset = g_hash_table_contains(seen, "model.preset");
    /* an empty per-stage list is none: ppsim chooses (how --set clears one, as `ppsim search`
     * does for the layouts it tries) */
    if (m->stage_layers != NULL && m->stage_layers->len == 0)
        g_clear_pointer(&m->stage_layers, g_array_unref);
    if (m->stage_recompute != NULL && m->stage_recompute->len == 0) {
        g_clear_pointer(&m->stage_recompute, g_array_unref);
        if (m->stage_recompute_layers != NULL)
            g_clear_pointer(&m->stage_recompute_layers, g_array_unref);
    }
    if (!g_hash_table_contains(seen, "model.ffn_hidden") && !preset)
        m->ffn_hidden = 4 * m->hidden;
    if (!g_hash_table_contains(seen, "model.kv_heads") && !preset)
        m->kv_heads = m->heads;
    PpsimParallel *par = &sc->parallel;
    par->present = g_hash_table_contains(seen, "parallel");
    if (par->present) {
        /* options of how a layout runs (how sends wait, where ranks sit, what overlaps, how
         * tokens reach experts) are not a layout: a `parallel:` section of them alone leaves
         * it unwritten, as each is a no-op with tp = pp = dp = cp = ep = 1 */
        static const char *const options[] = {"p2p",
                                              "placement",
                                              "tp_efficiency",
                                              "tp_comm_overlap",
                                              "tp_async_backward",
                                              "overlap_grad_reduce",
                                              "overlap_param_gather",
                                              "grad_reduce_dtype",
                                              "zero3_layout",
                                              "grad_sync",
                                              "ep_dispatch",
                                              "ep_fp8_dispatch",
                                              "ep_comm_sms",
                                              NULL};
        gboolean layout = FALSE;
        for (const SchemaKey *k = parallel_keys; k->name != NULL && !layout; k++) {
            g_autofree char *path = g_strconcat("parallel.", k->name, NULL);
            layout = !g_strv_contains(options, k->name) && g_hash_table_contains(seen, path);
        }
        par->present = layout;
    }
    if (!g_hash_table_contains(seen, "parallel.etp")) {
        /* Megatron-Core's default, ETP = TP; unless ep x tp is more than the stage's tp x cp
         * x dp GPUs, where an EP group that spans the TP ranks (ep dividing tp x cp x dp)
         * keeps its experts split no more than fits: the largest etp dividing tp that does */
        gint64 stage = (gint64)par->tp * MAX(1, par->cp) * MAX(1, par->dp);
        par->etp = MAX(1, par->tp);
        if (par->ep > 1 && stage % ((gint64)par->ep * par->etp) != 0)
            for (int e = par->etp - 1; e >= 1; e--)
                if (par->tp % e == 0 && stage % ((gint64)par->ep * e) == 0) {
                    par->etp = e; /* none: tp stays, and the rule's error names the keys */
                    break;
                }
    }
    if (!sc->costs.present)
        apply_framework(sc, seen);
    if (g_hash_table_contains(seen, "parallel.pp") && !g_hash_table_contains(seen, "training.pp"))
        sc->training.pp = par->pp;
    if (g_hash_table_contains(seen, "training.global_batch") &&
        !g_hash_table_contains(seen, "training.microbatches"))
        sc->training.microbatches =
            sc->training.global_batch / (par->dp * sc->training.microbatch_size);
    if (!g_hash_table_contains(seen, "hardware.nodes") && sc->hardware.gpus_per_node > 0)
        sc->hardware.nodes =
            (ppsim_scenario_gpus(sc) + sc->hardware.gpus_per_node - 1) / sc->hardware.gpus_per_node;
    if (!g_hash_table_contains(seen, "costs.recompute"))
        sc->costs.recompute_ps = sc->costs.forward_ps;
    if (!g_hash_table_contains(seen, "costs.weight_activation"))
        sc->costs.weight_activation = sc->costs.activation;
    sc->memory_limit_set = g_hash_table_contains(seen, "memory.limit") &&
                           (!sc->costs.present || sc->memory_limit_units > 0);
    if (!sc->costs.present && !g_hash_table_contains(seen, "memory.limit"))
        sc->memory_limit_bytes = sc->hardware.gpu_memory_bytes;
    sc->training.bytes_per_param_set = g_hash_table_contains(seen, "training.bytes_per_param");
    if (!sc->training.bytes_per_param_set) /* weights 2 + gradients + 12 ([ZERO] §3.1) */
        sc->training.bytes_per_param =
            2.0 + (sc->training.main_grads == PPSIM_MAIN_GRADS_FP32 ? 4.0 : 2.0) + 12.0;
    sc->has_hardware = !sc->costs.present || g_hash_table_contains(seen, "hardware");
    sc->has_model = g_hash_table_contains(seen, "model");
    sc->training.chunks_set = g_hash_table_contains(seen, "training.chunks");
    sc->variability.present = g_hash_table_contains(seen, "variability");
}

static gboolean
check_fail_code(GError **error, int code, WhereOfFunc where_of, gpointer data, const char *path,
                const char *message)
{
    g_autofree char *where = where_of(path, data);
    g_set_error(error, PPSIM_SCENARIO_ERROR, code, "%s: %s", where, message);
    return FALSE;
}

static gboolean
check_fail(GError **error, WhereOfFunc where_of, gpointer data, const char *path,
           const char *message)
{
    return check_fail_code(error, PPSIM_SCENARIO_ERROR_VALUE, where_of, data, path, message);
}

gboolean
ppsim_scenario_key_implied(const char *path, GHashTable *seen)
{
    if (strcmp(path, "training.pp") == 0)
        return g_hash_table_contains(seen, "parallel.pp");
    if (strcmp(path, "training.microbatches") == 0)
        return g_hash_table_contains(seen, "training.global_batch");
    if (g_str_has_prefix(path, "model."))
        return g_hash_table_contains(seen, "model.preset");
    return FALSE;
}

/* The key that asks for recompute mode @r (model.recompute, else a model.stage_recompute
 * entry), or NULL when no layer takes it. */
static const char *
recompute_mode_key(const PpsimModel *m, PpsimRecompute r)
{
    if (m->recompute == r)
        return "model.recompute";
    for (guint i = 0; m->stage_recompute != NULL && i < m->stage_recompute->len; i++)
        if (g_array_index(m->stage_recompute, int, i) == (int)r)
            return "model.stage_recompute";
    return NULL;
}

/* The rules of `parallel:` and `training.global_batch` (one-line errors naming keys and
 * values). */
static gboolean
check_parallel(const PpsimScenario *sc, GHashTable *seen, WhereOfFunc where_of, gpointer data,
               GError **error)
{
    const PpsimParallel *par = &sc->parallel;
    const PpsimTraining *tr = &sc->training;
    const PpsimHardware *hw = &sc->hardware;
    g_autofree char *msg = NULL;
    if (g_hash_table_contains(seen, "parallel.pp") && g_hash_table_contains(seen, "training.pp") &&
        par->pp != tr->pp) {
        msg = g_strdup_printf("'parallel.pp' (%d) and 'training.pp' (%d) disagree: write one of "
                              "them",
                              par->pp, tr->pp);
        return check_fail(error, where_of, data, "parallel.pp", msg);
    }
    if (par->grad_sync == PPSIM_GRAD_SYNC_ALL_REDUCE && par->zero == 3)
        return check_fail(error, where_of, data, "parallel.grad_sync",
                          "'parallel.grad_sync: all_reduce' is how ZeRO 1 and 2 reduce the "
                          "gradients before each rank steps its shard; ZeRO-3 reduce-scatters "
                          "them ('parallel.zero' 3)");
    if (g_hash_table_contains(seen, "training.global_batch")) {
        int per = par->dp * tr->microbatch_size;
        if (tr->global_batch % per != 0) {
            msg = g_strdup_printf("'training.global_batch' (%d) must be a multiple of "
                                  "'parallel.dp' x 'training.microbatch_size' (%d x %d = %d)",
                                  tr->global_batch, par->dp, tr->microbatch_size, per);
            return check_fail(error, where_of, data, "training.global_batch", msg);
        }
        if (g_hash_table_contains(seen, "training.microbatches") &&
            tr->microbatches * per != tr->global_batch) {
            msg = g_strdup_printf("'training.microbatches' (%d) x 'parallel.dp' x "
                                  "'training.microbatch_size' (%d) is not "
                                  "'training.global_batch' (%d): write one of them",
                                  tr->microbatches, per, tr->global_batch);
            return check_fail(error, where_of, data, "training.global_batch", msg);
        }
    }
    if (!par->present)
        return TRUE;
    if (par->ep_fp8_dispatch &&
        (par->ep_dispatch != PPSIM_EP_DISPATCH_DEEPEP || tr->dtype != PPSIM_DTYPE_FP8))
        return check_fail(error, where_of, data, "parallel.ep_fp8_dispatch",
                          "'parallel.ep_fp8_dispatch' sends the experts' FP8 inputs through "
                          "DeepEP: it needs 'parallel.ep_dispatch: deepep' and "
                          "'training.dtype: fp8'");
    if (par->tp > 1 && par->tp_comm_overlap && !par->sequence_parallel)
        return check_fail(error, where_of, data, "parallel.tp_comm_overlap",
                          "'parallel.tp_comm_overlap' needs 'parallel.sequence_parallel: true': "
                          "the overlap splits sequence parallelism's all-gathers and "
                          "reduce-scatters under the GEMMs beside them (Megatron-LM refuses it "
                          "without); an all-reduce is not split");
    int gpus = ppsim_scenario_gpus(sc), have = hw->nodes * hw->gpus_per_node;
    if (g_hash_table_contains(seen, "hardware.nodes") ? gpus != have : gpus > have) {
        if (par->cp > 1)
            msg = g_strdup_printf("'parallel.tp' x 'parallel.cp' x 'parallel.pp' x 'parallel.dp' "
                                  "= %d x %d x %d x %d = %d GPUs, but 'hardware.nodes' x "
                                  "'hardware.gpus_per_node' = %d x %d = %d",
                                  par->tp, par->cp, tr->pp, par->dp, gpus, hw->nodes,
                                  hw->gpus_per_node, have);
        else
            msg =
                g_strdup_printf("'parallel.tp' x 'parallel.pp' x 'parallel.dp' = %d x %d x %d = "
                                "%d GPUs, but 'hardware.nodes' x 'hardware.gpus_per_node' = %d "
                                "x %d = %d",
                                par->tp, tr->pp, par->dp, gpus, hw->nodes, hw->gpus_per_node, have);
        return check_fail(error, where_of, data, "parallel", msg);
    }
    int g = hw->gpus_per_node;
    if (g > 0 && g % par->tp != 0 && par->tp % g != 0) {
        msg = g_strdup_printf("'parallel.tp' (%d) must divide 'hardware.gpus_per_node' (%d) or "
                              "be a multiple of it",
                              par->tp, g);
        return check_fail(error, where_of, data, "parallel.tp", msg);
    }
    const PpsimModel *m = &sc->model;
    if (par->ep > 1 && m->moe.experts == 0) {
        msg = g_strdup_printf("'parallel.ep' (%d) needs a mixture-of-experts model "
                              "('model.moe')",
                              par->ep);
        return check_fail(error, where_of, data, "parallel.ep", msg);
    }
    if (par->etp != par->tp && m->moe.experts == 0) {
        msg = g_strdup_printf("'parallel.etp' (%d) needs a mixture-of-experts model "
                              "('model.moe')",
                              par->etp);
        return check_fail(error, where_of, data, "parallel.etp", msg);
    }
    if (par->ep_comm_sms >= 0 && hw->gpu_sms > 0 && par->ep_comm_sms >= hw->gpu_sms) {
        msg = g_strdup_printf("'parallel.ep_comm_sms' (%d) must be below 'hardware.gpu.sms' "
                              "(%d): the all-to-alls leave the rest to the compute beside them",
                              par->ep_comm_sms, hw->gpu_sms);
        return check_fail(error, where_of, data, "parallel.ep_comm_sms", msg);
    }
    if (par->tp % par->etp != 0) {
        msg = g_strdup_printf("'parallel.etp' (%d) must divide 'parallel.tp' (%d)", par->etp,
                              par->tp);
        return check_fail(error, where_of, data, "parallel.etp", msg);
    }
    if (par->ep > 1 && m->moe.experts % par->ep != 0) {
        msg = g_strdup_printf("'parallel.ep' (%d) must divide 'model.moe.experts' (%d)", par->ep,
                              m->moe.experts);
        return check_fail(error, where_of, data, "parallel.ep", msg);
    }
    gint64 stage = (gint64)par->tp * par->cp * par->dp, folds = (gint64)par->ep * par->etp;
    if (par->ep > 1 && stage % folds != 0) {
        /* the experts' ranks are the stage's own: ep groups of etp GPUs, repeated over the
         * expert-data-parallel ranks (Megatron-Core's ETP x EP x EDP = TP x CP x DP) */
        msg = g_strdup_printf("'parallel.ep' x 'parallel.etp' (%d x %d) must divide "
                              "'parallel.tp' x 'parallel.cp' x 'parallel.dp' (%d x %d x %d: the "
                              "GPUs of one pipeline stage)%s",
                              par->ep, par->etp, par->tp, par->cp, par->dp,
                              par->etp > 1 && stage % par->ep == 0
                                  ? "; with 'parallel.etp: 1' each expert stays whole and EP "
                                    "may span the TP ranks"
                                  : "");
        return check_fail(error, where_of, data, "parallel.ep", msg);
    }
    if (g_hash_table_contains(seen, "model") &&
        (m->seq_len % par->cp != 0 || m->heads % par->cp != 0)) {
        msg = g_strdup_printf("'parallel.cp' (%d) must divide 'model.seq_len' (%d) and "
                              "'model.heads' (%d)",
                              par->cp, m->seq_len, m->heads);
        return check_fail(error, where_of, data, "parallel.cp", msg);
    }
    if (g_hash_table_contains(seen, "model") && par->cp > 1 && m->sliding_window > 0 &&
        m->sliding_window < m->seq_len)
        return check_fail(error, where_of, data, "parallel.cp",
                          "context parallelism with 'model.sliding_window' is not modelled "
                          "(ring attention over a window passes fewer KV blocks); drop one");
    if (g_hash_table_contains(seen, "model") &&
        (m->heads % par->tp != 0 || m->kv_heads % par->tp != 0)) {
        msg = g_strdup_printf("'parallel.tp' (%d) must divide 'model.heads' (%d) and "
                              "'model.kv_heads' (%d)",
                              par->tp, m->heads, m->kv_heads);
        return check_fail(error, where_of, data, "parallel.tp", msg);
    }
    return TRUE;
}

/* The key to blame for a conflict between @key and @other: @key when the file or a --set
 * wrote it, or when @other was not written either (both a preset's); else @other. */
static const char *
written_or(GHashTable *seen, const char *key, const char *other)
{
    return g_hash_table_contains(seen, key) || !g_hash_table_contains(seen, other) ? key : other;
}

gboolean
ppsim_scenario_check(const PpsimScenario *sc, GHashTable *seen, WhereOfFunc where_of, gpointer data,
                     GError **error)
{
    const PpsimModel *m = &sc->model;
    if (!sc->costs.present && !g_hash_table_contains(seen, "model"))
        return check_fail_code(error, PPSIM_SCENARIO_ERROR_SCHEMA, where_of, data, "",
                               "missing required key 'model' (or a 'costs' section for "
                               "explicit-cost mode)");
    if (g_hash_table_contains(seen, "model") && m->heads % m->kv_heads != 0) {
        g_autofree char *msg = g_strdup_printf(
            "'model.kv_heads' must divide 'model.heads' (%d), got %d", m->heads, m->kv_heads);
        return check_fail(error, where_of, data, "model.kv_heads", msg);
    }
    if (g_hash_table_contains(seen, "model.mla") &&
        !g_hash_table_contains(seen, "model.mla.kv_lora_rank") && m->mla.kv_lora_rank <= 0)
        return check_fail(error, where_of, data, "model.mla",
                          "'model.mla' needs 'model.mla.kv_lora_rank' (the KV latent's width; "
                          "the model preset has no MLA to take it from)");
    if (m->mla.kv_lora_rank > 0 && (m->kv_heads != m->heads || m->head_dim > 0))
        return check_fail(error, where_of, data,
                          m->head_dim > 0 ? "model.head_dim" : "model.kv_heads",
                          "'model.mla' gives the heads' widths and shares one latent over every "
                          "head: drop 'model.kv_heads' and 'model.head_dim'");
    if (m->attention_kernel != PPSIM_ATTN_DEFAULT && !m->flash_attention)
        return check_fail(error, where_of, data, "model.attention_kernel",
                          "'model.attention_kernel' names a fused attention kernel, but "
                          "'model.flash_attention' is false (the standard kernels); drop one");
    if (m->full_attention_every > 0 && m->sliding_window == 0 &&
        g_hash_table_contains(seen, "model.full_attention_every"))
        return check_fail(error, where_of, data, "model.full_attention_every",
                          "'model.full_attention_every' picks the layers a sliding window "
                          "leaves out: set 'model.sliding_window' (its width in tokens) too");
    if (m->sliding_window > 0 && !m->causal)
        return check_fail(error, where_of, data, "model.sliding_window",
                          "'model.sliding_window' is a causal window (a query sees itself and "
                          "the tokens before it): it needs 'model.causal: true'");
    if (m->elementwise == PPSIM_ELEMENTWISE_EAGER &&
        (m->mlp != PPSIM_MLP_SWIGLU || m->mla.kv_lora_rank > 0))
        return check_fail(error, where_of, data, "model.elementwise",
                          "'model.elementwise: eager' is modelled for the Llama layer only "
                          "('model.mlp: swiglu': RMSNorm, rotary, SwiGLU; no 'model.mla')");
    if (m->elementwise == PPSIM_ELEMENTWISE_EAGER && sc->training.dtype == PPSIM_DTYPE_FP8)
        return check_fail(error, where_of, data, "model.elementwise",
                          "'model.elementwise: eager' is modelled in bf16 only; FP8 "
                          "('training.dtype: fp8') is Transformer Engine's fused kernels");
    const PpsimMoe *moe = &m->moe;
    const char *key = recompute_mode_key(m, PPSIM_RECOMPUTE_MOE);
    if (key != NULL && moe->experts == 0)
        return check_fail(error, where_of, data, key,
                          "recompute mode 'moe' re-runs the MoE layers' MLP blocks: it needs a "
                          "mixture-of-experts model ('model.moe')");
    key = recompute_mode_key(m, PPSIM_RECOMPUTE_MLA_UP);
    if (key != NULL && m->mla.kv_lora_rank <= 0)
        return check_fail(error, where_of, data, key,
                          "recompute mode 'mla_up_proj' re-runs multi-head latent attention's "
                          "up-projections: it needs 'model.mla'");
    if (moe->experts > 0 && moe->top_k > moe->experts) {
        g_autofree char *msg =
            g_strdup_printf("'model.moe.top_k' (%d) cannot exceed 'model.moe.experts' (%d)",
                            moe->top_k, moe->experts);
        return check_fail(error, where_of, data, "model.moe.top_k", msg);
    }
    /* group-limited routing: on with both keys above 0 (either 0 turns a preset's off) */
    const char *one = moe->groups > 0 ? "model.moe.groups" : "model.moe.group_top_k";
    if (moe->experts > 0 && (moe->groups > 0) != (moe->group_top_k > 0) &&
        g_hash_table_contains(seen, one))
        return check_fail(error, where_of, data, one,
                          "group-limited routing needs both 'model.moe.groups' (the expert "
                          "groups) and 'model.moe.group_top_k' (the groups a token may use)");
    gboolean grouped = moe->groups > 0 && moe->group_top_k > 0;
    if (moe->experts > 0 && grouped && moe->experts % moe->groups != 0) {
        g_autofree char *msg =
            g_strdup_printf("'model.moe.groups' (%d) must divide 'model.moe.experts' (%d)",
                            moe->groups, moe->experts);
        return check_fail(error, where_of, data,
                          written_or(seen, "model.moe.groups", "model.moe.experts"), msg);
    }
    if (moe->experts > 0 && grouped &&
        (moe->group_top_k > moe->groups ||
         (long)moe->group_top_k * (moe->experts / moe->groups) < moe->top_k)) {
        g_autofree char *msg = g_strdup_printf(
            "'model.moe.group_top_k' (%d) must be at most 'model.moe.groups' (%d) and its groups "
            "of %d experts must hold a token's 'model.moe.top_k' (%d)",
            moe->group_top_k, moe->groups, moe->experts / moe->groups, moe->top_k);
        return check_fail(error, where_of, data,
                          written_or(seen, "model.moe.group_top_k", "model.moe.top_k"), msg);
    }
    if (moe->experts > 0 && moe->dense_layers > m->layers) {
        g_autofree char *msg =
            g_strdup_printf("'model.moe.dense_layers' (%d) cannot exceed 'model.layers' (%d)",
                            moe->dense_layers, m->layers);
        return check_fail(error, where_of, data, "model.moe.dense_layers", msg);
    }
    if (sc->training.fp8_recipe != PPSIM_FP8_DELAYED && sc->training.dtype != PPSIM_DTYPE_FP8)
        return check_fail(error, where_of, data, "training.fp8_recipe",
                          "'training.fp8_recipe' is an FP8 recipe: it needs 'training.dtype: fp8'");
    if (sc->training.fp8_weights && sc->training.dtype != PPSIM_DTYPE_FP8)
        return check_fail(error, where_of, data, "training.fp8_weights",
                          "'training.fp8_weights' stores the weights in FP8: it needs "
                          "'training.dtype: fp8'");
    if (!check_parallel(sc, seen, where_of, data, error))
        return FALSE;
    if (!sc->parallel.present && g_hash_table_contains(seen, "hardware.nodes") &&
        sc->hardware.nodes * sc->hardware.gpus_per_node < sc->training.pp) {
        g_autofree char *msg =
            g_strdup_printf("%d node(s) of %d GPUs cannot hold training.pp = %d devices",
                            sc->hardware.nodes, sc->hardware.gpus_per_node, sc->training.pp);
        return check_fail(error, where_of, data, "hardware.nodes", msg);
    }
    /* ops of one iteration: at most F, B, W and R per (stage, microbatch), plus copies */
    double ops = 4.0 * sc->training.pp * sc->training.chunks * sc->training.microbatches;
    if (ops > PPSIM_SCENARIO_MAX_OPS) {
        g_autofree char *msg = g_strdup_printf(
            "training.pp x chunks x microbatches = %d x %d x %d makes about %.3g ops, more than "
            "the %.3g one run replays (lower training.microbatches)",
            sc->training.pp, sc->training.chunks, sc->training.microbatches, ops,
            PPSIM_SCENARIO_MAX_OPS);
        return check_fail(error, where_of, data, "training.microbatches", msg);
    }
    if (sc->costs.weight_activation > sc->costs.activation) {
        g_autofree char *msg =
            g_strdup_printf("'costs.weight_activation' (%g) cannot exceed 'costs.activation' (%g)",
                            sc->costs.weight_activation, sc->costs.activation);
        return check_fail(error, where_of, data, "costs.weight_activation", msg);
    }
    if (sc->costs.present && sc->framework != 0) {
        g_autofree char *msg = g_strdup_printf(
            "'framework: %s' needs hardware mode: it sets how the kernels and collectives of "
            "a modelled run behave, and explicit costs have none (remove 'costs' or the key)",
            ppsim_framework_names[sc->framework]);
        return check_fail(error, where_of, data, "framework", msg);
    }
    if (sc->costs.present && sc->parallel.p2p != PPSIM_P2P_ASYNC) {
        g_autofree char *msg = g_strdup_printf(
            "'parallel.p2p: %s' needs hardware mode: with explicit costs every transfer is a "
            "fixed latency (remove 'costs' or the key)",
            ppsim_p2p_name(sc->parallel.p2p));
        return check_fail(error, where_of, data, "parallel.p2p", msg);
    }
    /* a reserve written larger than the GPU is a mistake; the default one on a GPU smaller
     * than it (a 0-byte GPU) is a verdict: every device is out of memory */
    if (!sc->costs.present && g_hash_table_contains(seen, "memory.reserved") &&
        sc->memory_reserved_bytes >= sc->hardware.gpu_memory_bytes) {
        g_autofree char *msg =
            g_strdup_printf("'memory.reserved' (%.3f GiB) must be smaller than the GPU's memory "
                            "'hardware.gpu.memory' (%.3f GiB)",
                            (double)sc->memory_reserved_bytes / 1073741824.0,
                            (double)sc->hardware.gpu_memory_bytes / 1073741824.0);
        return check_fail(error, where_of, data, "memory.reserved", msg);
    }
    return TRUE;
}

/* ---- numbers by key path ------------------------------------------------------------- */

gboolean
ppsim_scenario_lookup_number(const PpsimScenario *sc, const char *path, double *out)
{
    if (strcmp(path, "memory.limit") == 0) {
        *out = sc->costs.present ? sc->memory_limit_units : (double)sc->memory_limit_bytes;
        return TRUE;
    }
    /* the two family-decided flags, resolved */
    if (strcmp(path, "model.dropout") == 0) {
        *out = ppsim_model_dropout(&sc->model) ? 1 : 0;
        return TRUE;
    }
    if (strcmp(path, "model.rotary") == 0) {
        *out = ppsim_model_rotary(&sc->model) ? 1 : 0;
        return TRUE;
    }
    const SchemaKey *k = schema_key_at(path);
    if (k == NULL)
        return FALSE;
    const char *field = (const char *)sc + k->offset;
    switch (k->type) {
    case KEY_INT:
    case KEY_RECOMPUTE:
    case KEY_ENUM:
        *out = *(const int *)field;
        return TRUE;
    case KEY_BOOL:
        *out = *(const gboolean *)field ? 1 : 0;
        return TRUE;
    case KEY_DOUBLE:
    case KEY_BANDWIDTH:
    case KEY_FLOPS:
    case KEY_COUNT:
        *out = *(const double *)field;
        if (*out < 0 && g_str_has_prefix(path, "variability.cv_")) /* unset: cv's */
            *out = sc->variability.cv;
        return TRUE;
    case KEY_BYTES:
        *out = (double)*(const guint64 *)field;
        return TRUE;
    case KEY_TIME:
    case KEY_TIME_MS:
        *out = (double)*(const PpsimTime *)field / PPSIM_PS_PER_MS;
        return TRUE;
    default:
        return FALSE;
    }
}
