/* scenario-models.c: model presets, published shapes only.
 *
 * GPT-3 175B: [GPT3] Table 2.1 (96 layers, d_model 12288, 96 heads, context 2048) with the
 * 51,200-token padded vocabulary of [NAR21] §5.1; the LM head is the input embedding, as in
 * GPT-2, whose architecture [GPT3] §2.1 keeps, and in Megatron-LM's GPT ([MEG] gpt_model.py:
 * the logits use word_embeddings_weight()). Llama 2: [LLAMA2] §2.2 and Table 1
 * (context 4096; grouped-query attention for 70B) with the released configurations' widths
 * (7B: 4096 / 11008 / 32 heads; 70B: 8192 / 28672 / 64 heads, 8 KV heads; vocabulary 32,000).
 * Llama 3: [L3] Table 3 (8B: 32 layers, 4096, FFN 14336, 32 heads; 70B: 80, 8192, 28672, 64;
 * 405B: 126, 16384, 53248, 128; 8 KV heads each; vocabulary "128,000", 128,256 in the
 * released tokenizer) with an 8192-token training context ([L3] §3.4.1).
 *
 * DeepSeek-V3 ([DSV3] §2, §4.2): 61 layers, hidden 7168, 128 heads, the first 3 layers dense
 * (FFN 18432), the others mixture of experts with 1 shared and 256 routed experts of FFN
 * width 2048, 8 routed per token, SwiGLU, vocabulary 129,280 (the released configuration),
 * 4096-token pre-training sequences; 671B parameters in all, 37B active per token.
 * Multi-head latent attention (model.mla, [DSV3] §2.1.1) with §4.2's ranks: 187M parameters
 * a layer, 671.03B in all, 37.55B active; the multi-token-prediction module is left out, as
 * the 671B leaves it.
 * Mixtral 8x7B ([MIXTRAL] Table 1): 32 layers, dim 4096, FFN 14336, 32 heads, 8 KV heads,
 * 8 experts, 2 per token, vocabulary 32,000, context 32,768 (a training run usually sets a
 * shorter seq_len).
 * Llama 2 13B ([LLAMA2] Table 1, the released configuration): 40 layers, 5120, FFN 13824,
 * 40 heads (no GQA), vocabulary 32,000, context 4096.
 * Mixtral 8x22B ([MIXTRAL-8X22B]): 56 layers, hidden 6144, FFN 16384, 48 heads, 8 KV heads,
 * 8 experts, 2 per token, vocabulary 32,000, context 65,536; 140.6B parameters (39.2B active).
 * Grok-1 ([GROK1-REPO] `run.py`, `model.py`): 64 layers, hidden 48 x 128 = 6144, 48 heads of
 * 128, 8 KV heads, FFN int(8 x 6144) x 2 // 3 = 32,768 (gated: three matrices, as SwiGLU), 8
 * experts, 2 per token, vocabulary 128 x 1024 = 131,072, context 8192; 314B parameters.
 * Its input and output embeddings are one matrix (model.tied_embeddings): 315.68B in all,
 * 0.5% above the published 314B, 83.8B active.
 * Nemotron-4 15B and 340B ([NT4-15B] Table 1, [NT4-340B] Table 1): 32 and 96 layers, hidden
 * 6144 and 18432, 48 and 96 heads, 8 KV heads, squared-ReLU FFN of 4h (two matrices: the
 * GELU family's shape), rotary positions, no dropout, untied embeddings, vocabulary 256,000,
 * 4096-token sequences. They have no biases; the GELU family counts them (+0.03% and +0.01%
 * of the parameters).
 * Qwen3 30B-A3B and 235B-A22B ([MEG-QWEN3]): 48 and 94 layers, hidden 2048 and 4096, 32 and
 * 64 query heads of 128 (head_dim: wider than hidden / heads), 4 KV heads, every layer
 * mixture of experts with 128 experts of FFN 768 and 1536, 8 per token, no shared expert,
 * untied embeddings, vocabulary 151,936, 4096-token sequences. ppsim counts 30.53B
 * parameters (3.35B active) and 235.09B (22.19B active), the models' names' 30B (3B) and
 * 235B (22B). Their per-head RMSNorm on q and k (qk-layernorm) is not modelled.
 * GPT-OSS 120B ([GPT-OSS]; [MB-PS] gpt_oss_provider.py): 36 layers, hidden 2880, 64 query
 * heads of 64 and 8 KV heads, every layer mixture of experts with 128 experts of FFN 2880, 4
 * per token, gated (three matrices, as SwiGLU; its activation is a clamped quick-GELU), no
 * shared expert, RMSNorm, rotary positions, untied embeddings, vocabulary 201,088; the
 * attention alternates a banded window of 128 tokens (the odd layers, 1-based) with the whole
 * sequence (the even ones: Megatron-Core's window_attn_skip_freq 2); 4096-token sequences, as
 * [MB-PS]'s pre-training runs. ppsim counts 116.79B parameters, [GPT-OSS]'s 116.8B (its
 * biases and attention sinks, 0.04B, not modelled). GPT-OSS 20B ([GPT-OSS]): the same layer
 * with 24 layers and 32 experts; 20.91B, [GPT-OSS]'s 20.9B.
 */
#include "scenario/scenario.h"

#include <string.h>

#define GPT(l, h, a, s, v)                                                                         \
    {                                                                                              \
        .mlp = PPSIM_MLP_GELU, .layers = l, .hidden = h, .ffn_hidden = 4 * (h), .heads = a,        \
        .kv_heads = a, .seq_len = s, .vocab = v, .tied_embeddings = TRUE                           \
    }
#define LLAMA(l, h, f, a, g, s, v)                                                                 \
    {                                                                                              \
        .mlp = PPSIM_MLP_SWIGLU, .layers = l, .hidden = h, .ffn_hidden = f, .heads = a,            \
        .kv_heads = g, .seq_len = s, .vocab = v                                                    \
    }

static const PpsimModelPreset gpt3_175b = {"gpt3-175b", "GPT-3 175B [GPT3] Table 2.1",
                                           GPT(96, 12288, 96, 2048, 51200)};
static const PpsimModelPreset llama2_7b = {"llama2-7b", "Llama 2 7B [LLAMA2]",
                                           LLAMA(32, 4096, 11008, 32, 32, 4096, 32000)};
static const PpsimModelPreset llama2_13b = {"llama2-13b", "Llama 2 13B [LLAMA2]",
                                            LLAMA(40, 5120, 13824, 40, 40, 4096, 32000)};
static const PpsimModelPreset llama2_70b = {"llama2-70b", "Llama 2 70B, GQA [LLAMA2]",
                                            LLAMA(80, 8192, 28672, 64, 8, 4096, 32000)};
static const PpsimModelPreset llama3_8b = {"llama3-8b", "Llama 3 8B, GQA [L3] Table 3",
                                           LLAMA(32, 4096, 14336, 32, 8, 8192, 128256)};
static const PpsimModelPreset llama3_70b = {"llama3-70b", "Llama 3 70B, GQA [L3] Table 3",
                                            LLAMA(80, 8192, 28672, 64, 8, 8192, 128256)};
static const PpsimModelPreset llama3_405b = {"llama3-405b", "Llama 3 405B, GQA [L3] Table 3",
                                             LLAMA(126, 16384, 53248, 128, 8, 8192, 128256)};

/* [DSV3] §4.2: 61 layers, hidden 7168, 128 heads of 128 (d_h), KV compression d_c 512, query
 * compression d'_c 1536, decoupled rotary queries and key of 64 (d^R_h); the first three
 * layers dense; 1 shared and 256 routed experts of 2048, 8 a token, from at most 4 of 8
 * groups ("each token will be sent to at most 4 nodes", the groups a node's experts;
 * Megatron-Core's --moe-router-num-groups 8 --moe-router-group-topk 4 in [MOE-ZOO]'s
 * DeepSeek-V3 config). Trained with one multi-token-prediction module (§2.2; §5.4.3: it
 * "predicts the next 2 tokens"): model.mtp_layers 1, outside the 671B the totals count. */
static const PpsimModelPreset deepseek_v3 = {"deepseek-v3",
                                             "DeepSeek-V3 671B MoE (37B active, MLA) [DSV3]",
                                             {.mlp = PPSIM_MLP_SWIGLU,
                                              .layers = 61,
                                              .hidden = 7168,
                                              .ffn_hidden = 18432,
                                              .heads = 128,
                                              .kv_heads = 128,
                                              .seq_len = 4096,
                                              .vocab = 129280,
                                              .mtp_layers = 1,
                                              .moe = {.experts = 256,
                                                      .top_k = 8,
                                                      .expert_ffn_hidden = 2048,
                                                      .shared_experts = 1,
                                                      .dense_layers = 3,
                                                      .imbalance = 1.0,
                                                      .groups = 8,
                                                      .group_top_k = 4},
                                              .mla = {.q_lora_rank = 1536,
                                                      .kv_lora_rank = 512,
                                                      .qk_nope_head_dim = 128,
                                                      .qk_rope_head_dim = 64,
                                                      .v_head_dim = 128}}};
/* Mixtral (and Grok-1): every layer 8 experts of the FFN's width, 2 per token, 8 KV heads */
#define MIXTRAL(l, h, f, a, s, v, tied)                                                            \
    {                                                                                              \
        .mlp = PPSIM_MLP_SWIGLU, .layers = l, .hidden = h, .ffn_hidden = f, .heads = a,            \
        .kv_heads = 8, .seq_len = s, .vocab = v, .tied_embeddings = tied, .moe = {                 \
            .experts = 8,                                                                          \
            .top_k = 2,                                                                            \
            .expert_ffn_hidden = f,                                                                \
            .imbalance = 1.0                                                                       \
        }                                                                                          \
    }
static const PpsimModelPreset mixtral_8x7b = {"mixtral-8x7b",
                                              "Mixtral 8x7B MoE, GQA [MIXTRAL] Table 1",
                                              MIXTRAL(32, 4096, 14336, 32, 32768, 32000, FALSE)};

static const PpsimModelPreset mixtral_8x22b = {"mixtral-8x22b",
                                               "Mixtral 8x22B MoE, GQA [MIXTRAL-8X22B]",
                                               MIXTRAL(56, 6144, 16384, 48, 65536, 32000, FALSE)};

static const PpsimModelPreset grok_1 = {"grok-1", "Grok-1 314B MoE, GQA [GROK1-REPO]",
                                        MIXTRAL(64, 6144, 32768, 48, 8192, 131072, TRUE)};

/* Nemotron-4: a two-matrix squared-ReLU FFN of 4h (the GELU family's shape), RoPE, no
 * dropout */
#define NEMOTRON4(l, h, a)                                                                         \
    {                                                                                              \
        .mlp = PPSIM_MLP_GELU, .layers = l, .hidden = h, .ffn_hidden = 4 * (h), .heads = a,        \
        .kv_heads = 8, .seq_len = 4096, .vocab = 256000, .dropout = PPSIM_MODEL_FLAG_FALSE,        \
        .rotary = PPSIM_MODEL_FLAG_TRUE                                                            \
    }
static const PpsimModelPreset nemotron4_15b = {
    "nemotron4-15b", "Nemotron-4 15B, GQA; squared ReLU as gelu, RoPE, no dropout [NT4-15B]",
    NEMOTRON4(32, 6144, 48)};
static const PpsimModelPreset nemotron4_340b = {
    "nemotron4-340b", "Nemotron-4 340B, GQA; squared ReLU as gelu, RoPE, no dropout [NT4-340B]",
    NEMOTRON4(96, 18432, 96)};

#define QWEN3_MOE(l, h, a, fe)                                                                     \
    {                                                                                              \
        .mlp = PPSIM_MLP_SWIGLU, .layers = l, .hidden = h, .ffn_hidden = 3 * (h), .heads = a,      \
        .kv_heads = 4, .head_dim = 128, .seq_len = 4096, .vocab = 151936, .moe = {                 \
            .experts = 128,                                                                        \
            .top_k = 8,                                                                            \
            .expert_ffn_hidden = fe,                                                               \
            .imbalance = 1.0                                                                       \
        }                                                                                          \
    }
static const PpsimModelPreset qwen3_30b_a3b = {"qwen3-30b-a3b",
                                               "Qwen3 30B-A3B MoE (3.3B active), GQA [MEG-QWEN3]",
                                               QWEN3_MOE(48, 2048, 32, 768)};
static const PpsimModelPreset qwen3_235b_a22b = {
    "qwen3-235b-a22b", "Qwen3 235B-A22B MoE (22B active), GQA [MEG-QWEN3]",
    QWEN3_MOE(94, 4096, 64, 1536)};

#define GPT_OSS(l, e)                                                                              \
    {                                                                                              \
        .mlp = PPSIM_MLP_SWIGLU, .layers = l, .hidden = 2880, .ffn_hidden = 2880, .heads = 64,     \
        .kv_heads = 8, .head_dim = 64, .seq_len = 4096, .vocab = 201088, .sliding_window = 128,    \
        .full_attention_every = 2, .moe = {                                                        \
            .experts = e,                                                                          \
            .top_k = 4,                                                                            \
            .expert_ffn_hidden = 2880,                                                             \
            .imbalance = 1.0                                                                       \
        }                                                                                          \
    }
static const PpsimModelPreset gpt_oss_120b = {
    "gpt-oss-120b", "GPT-OSS 120B MoE, GQA, a 128-token window in every other layer [GPT-OSS]",
    GPT_OSS(36, 128)};
static const PpsimModelPreset gpt_oss_20b = {
    "gpt-oss-20b", "GPT-OSS 20B MoE, GQA, a 128-token window in every other layer [GPT-OSS]",
    GPT_OSS(24, 32)};

static const PpsimModelPreset *const presets[] = {
    &gpt3_175b,   &llama2_7b,     &llama2_13b,      &llama2_70b,   &llama3_8b,    &llama3_70b,
    &llama3_405b, &nemotron4_15b, &nemotron4_340b,  &deepseek_v3,  &mixtral_8x7b, &mixtral_8x22b,
    &grok_1,      &qwen3_30b_a3b, &qwen3_235b_a22b, &gpt_oss_120b, &gpt_oss_20b,  NULL};

const PpsimModelPreset *const *
ppsim_model_presets(void)
{
    return presets;
}

const PpsimModelPreset *
ppsim_model_preset_lookup(const char *name)
{
    for (int i = 0; presets[i]; i++)
        if (strcmp(presets[i]->name, name) == 0)
            return presets[i];
    return NULL;
}

int
ppsim_scenario_gpus(const PpsimScenario *sc)
{
    if (!sc->parallel.present)
        return sc->training.pp;
    return sc->parallel.tp * sc->parallel.cp * sc->training.pp * sc->parallel.dp;
}

gboolean
ppsim_scenario_overlaps_param_gather(const PpsimScenario *sc)
{
    const PpsimParallel *par = &sc->parallel;
    return par->present && par->overlap_param_gather && (par->zero == 1 || par->zero == 2);
}
