/* kernels.c: operator-level op times; see kernels.h.
 *
 * Per layer and microbatch, on one GPU of a tp group (t = tp, b sequences of s tokens, with
 * context parallelism s/cp of them, T = b s / cp tokens, hidden h, FFN f, a heads of d =
 * h/a (or model.head_dim), q = a d (h unless head_dim says otherwise), g KV heads, kv = g d,
 * 2-byte elements; with sequence parallelism the elementwise kernels see T/t tokens):
 *  - GEMMs (M x N x K) forward: QKV T x (q + 2kv)/t x h, attention output T x h x q/t, fc1
 *    T x f/t x h (SwiGLU: 2f/t, gate and up in one GEMM), fc2 T x h x f/t ([NAR21] §2.3:
 *    column- then row-parallel). A forward GEMM X W (M x N x K) has a dgrad dY W^T (M x K x
 *    N) in B and a wgrad X^T dY (K x N x M) in W ([ZB] §2.3). With model.mla the attention's
 *    linears are multi-head latent attention's (ppsim_model_attn_shape, attn_linears below):
 *    the down-projections whole on the GPU's Tn tokens, the up-projections column-split, the
 *    output projection row-split; its latents normed, its queries and keys d_qk wide and
 *    values d_v wide in the attention core, its latents and rotary key what sequence
 *    parallelism gathers.
 *  - FlashAttention ([FA2]): 4 b s^2 h / (t cp) FLOPs forward, halved when causal (the
 *    masked blocks are skipped); the backward re-computes the scores: 2.5x the forward
 *    FLOPs (5 GEMMs against 2); at the efficiency of model.attention_kernel (the GPU's
 *    default, what Transformer Engine picks: cuDNN's on Hopper, [TE] get_attention_backend;
 *    or cudnn, fa2, fa3, each a hardware.gpu.attention_efficiency_* key). The standard
 *    kernels ([NAR21] §3: Megatron's fused scale-mask-softmax) compute every score, masked
 *    or not: batched GEMMs QK^T (s x s x d) and AV (s x d x s) per head, softmax (read and
 *    write the s^2 scores) and dropout (read, write, 1-byte mask); backward two GEMMs for
 *    AV, dropout and softmax backward, two for QK^T.
 *  - Memory-bound forward: two norms (read + write T h), two bias-dropout-add (with
 *    model.dropout: read two, write one, 1-byte mask; without: residual adds, read two write
 *    one; PyTorch skips a dropout of p = 0), the activation (GELU read + write T f/t; SwiGLU
 *    read 2, write 1), rotary on q and k (model.rotary). Without dropout the standard
 *    attention kernels and the embedding have none either.
 *    Backward: norms read x and dy, write dx; dropout reads dy and the mask, writes dx; the
 *    residual adds two gradients; GELU reads x and dy, writes dx; SwiGLU reads gate, up, dy
 *    and writes two.
 *  - FP8 (training.dtype: fp8), as Megatron-Core runs Transformer Engine 1.x's delayed
 *    scaling (see fp8_kernels below): the two norms write their FP8 GEMM input (1 byte, not
 *    2); the cast and transpose kernels of the GEMMs' other inputs and of the output
 *    gradients; each weight's cast + transpose once a step; the amax reduction over the
 *    tp x dp x cp GPUs and the amax and scale update.
 *    With training.fp8_recipe: current (TE 2.x current scaling) an amax pass and a scale
 *    kernel before each cast instead of the history update, and the norms write bf16.
 *    With training.fp8_recipe: blockwise (TE 2.x block scaling, 1 x 128 and 128 x 128 blocks,
 *    DeepSeek-V3's recipe; fp8_block_kernels below) one quantizing pass a tensor writing its
 *    row- and column-wise copies, timed from TE's own measurement, the norms writing bf16,
 *    all-gathers of both copies, no amax history and no amax all-reduce.
 *  - TP collectives: two per layer forward of the full 2 T h-byte activation ([KOR]
 *    §4.2.2): all-reduces, or with sequence parallelism an all-gather plus a reduce-scatter
 *    (the same bytes; with FP8 the all-gather moves 1 byte a value, with block scaling 2: both
 *    copies), on the critical path.
 *    Backward, with parallel.tp_async_backward (the default), as Megatron-LM since 2021-09
 *    and Transformer Engine run them (column_backward below): the row-parallel linears'
 *    output-gradient all-gathers on the critical path, the column-parallel ones' (QKV,
 *    fc1) input all-gather beside their dgrad GEMM and input-gradient reduce-scatter (or
 *    all-reduce) beside their wgrad GEMM; false: the forward's collectives again, on the
 *    critical path. With parallel.tp_comm_overlap (which needs sequence parallelism) each
 *    split under the GEMM beside it, as Transformer Engine's userbuffers run them
 *    (tp_split, tp_pipeline below): forward the all-gathers under QKV and fc1, the
 *    reduce-scatters under the output projection and fc2; backward the output gradients'
 *    all-gathers under the projection's and fc2's dgrad, QKV and fc1 in bulk as above.
 *  - Context parallelism (ring attention, [L3] §3.3.2): the KV blocks of the other cp - 1
 *    ranks arrive one step at a time, each step overlapping one block of attention: per
 *    step max(0, send time - compute time) shows; the backward sends K, V and their
 *    gradients.
 *  - MoE layers (model.moe): the MLP's GEMMs, activation and TP collectives replaced by the
 *    router, the token permutation, the local experts' grouped GEMMs and the shared experts
 *    (moe_mlp below); the EP all-to-alls are moe.c's.
 *  - First stage: the vocabulary-parallel embedding gather (+ dropout) and its TP
 *    all-reduce; backward the gradient scatter-add. Last stage: final norm, LM head GEMM T
 *    x V/t x h, its dgrad (B) and wgrad (W), and the cross-entropy as model.cross_entropy
 *    names it (loss_kernels): over fp32 logits ([KOR] §4.3) as Megatron's unfused
 *    vocab-parallel kernels run it ([MEG-CE], 2021 and r0.8 alike; 38 bytes per logit
 *    forward, 14 backward), the same steps fused (native: 22 and 10), or Transformer
 *    Engine's Triton kernels over the bf16 logits (te: 6 and 4).
 *  - ZeRO-3 with parallel.zero3_layout: per_param (FSDP2): the copies out of each gather
 *    and into each reduce-scatter (ppsim_kernels_fill_zero3_copies).
 *  - Optimizer (after the last DP reduction): Adam over the local shard (params / (dp x cp)
 *    with ZeRO >= 1, as Megatron shards, memory.h; the routed experts' over their
 *    expert-data-parallel ranks): per parameter read the fp32 main gradient, master weight,
 *    m and v, write them back and the bf16 weight (30 bytes), plus 4 bytes for gradient
 *    clipping's norm. training.optimizer eager runs Adam as PyTorch ops, one pass each
 *    (Composer's DecoupledAdamW, [MPT-BENCH]: m *= b1, m += (1 - b1) g, v *= b2,
 *    v += (1 - b2) g g, sqrt(v), / sqrt(bc2), + eps, p -= lr m / denom: 8 + 12 + 8 + 12 +
 *    8 + 8 + 8 + 16 = 80 bytes; the fp32 weights are the ones gathered, so no 16-bit copy)
 *    and clipping as PyTorch FSDP's clip_grad_norm_ does (the norm, then every gradient
 *    scaled in place: 4 + 8): 92 bytes.
 *  - DP: the stage's bf16 gradients all-reduced NCCL-style (hierarchical when the group
 *    spans nodes) over dp x cp ranks; with parallel.overlap_grad_reduce (Megatron's
 *    overlap_grad_reduce, one bucket per layer) the buckets reduce while the last
 *    microbatch's backward runs, and only what is left after it is sent after the stage's
 *    last W. ZeRO-3 keeps parallel.c's ring reduce-scatter, with the same buckets (FSDP
 *    reduce-scatters a layer's gradients when its backward ends); its weight all-gathers
 *    are the replay's flows, layer by layer (sim-parallel.c).
 */
#include "cost/kernels.h"
#include "cost/parallel.h"
#include "cost/memory.h"
#include "cost/moe.h"
#include "util/ppsim-error.h"

#include <math.h>

#define EL 2.0 /* bytes of a bf16 element */

gboolean
ppsim_kernels_active(const PpsimScenario *sc)
{
    return !sc->costs.present && sc->hardware.gpu_efficiency <= 0;
}

void
ppsim_kernels_gpu(const PpsimHardware *hw, PpsimGpuSpec *out)
{
    *out = (PpsimGpuSpec){
        .peak_flops = hw->gpu_peak_flops,
        .gemm_eff = hw->gpu_gemm_efficiency,
        .attn_eff = hw->gpu_attention_efficiency,
        .sms = hw->gpu_sms,
        .tile_m = hw->gpu_tile_m,
        .tile_n = hw->gpu_tile_n,
        .k_overhead = hw->gpu_gemm_k_overhead,
        .hbm_bytes_per_s = hw->gpu_hbm_bytes_per_s,
        .mem_eff = hw->gpu_memory_efficiency,
        .launch_s = (double)hw->gpu_launch_ps / PPSIM_PS_PER_S,
        .elem_bytes = 2.0,
    };
}

gboolean
ppsim_kernels_check(const PpsimScenario *sc, GError **error)
{
    if (!ppsim_kernels_active(sc))
        return TRUE;
    const PpsimHardware *hw = &sc->hardware;
    const char *attn_key;
    double attn_eff = ppsim_attention_efficiency(hw, sc->model.attention_kernel, &attn_key);
    if (attn_eff <= 0 && sc->model.attention_kernel != PPSIM_ATTN_DEFAULT) {
        g_autofree char *where = ppsim_scenario_where(sc, "model.attention_kernel");
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                    "%s: 'model.attention_kernel' names a kernel with no efficiency on this "
                    "GPU: '%s' is not set (0) (the presets set these: "
                    "FlashAttention 1 and 2 on the A100; cuDNN and FlashAttention 1, 2 and 3 on "
                    "the H100, H800 and H200); set it, or choose another kernel",
                    where, attn_key);
        return FALSE;
    }
    struct {
        double v;
        const char *key;
    } need[] = {
        {hw->gpu_peak_flops, "hardware.gpu.peak_flops"},
        {hw->gpu_sms, "hardware.gpu.sms"},
        {hw->gpu_hbm_bytes_per_s, "hardware.gpu.hbm_bandwidth"},
        {hw->gpu_gemm_efficiency, "hardware.gpu.gemm_efficiency"},
        {attn_eff, attn_key},
        {hw->gpu_memory_efficiency, "hardware.gpu.memory_efficiency"},
        {hw->gpu_tile_m, "hardware.gpu.tile_m"},
        {hw->gpu_tile_n, "hardware.gpu.tile_n"},
        {hw->nvlink_bus_efficiency, "hardware.nvlink.bus_efficiency"},
        {hw->network_bus_efficiency, "hardware.network.bus_efficiency"},
        {sc->training.dtype == PPSIM_DTYPE_FP8 ? hw->gpu_peak_flops_fp8 : 1,
         "hardware.gpu.peak_flops_fp8"},
        {sc->training.dtype == PPSIM_DTYPE_FP8 ? hw->gpu_gemm_efficiency_fp8 : 1,
         "hardware.gpu.gemm_efficiency_fp8"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(need); i++) {
        if (need[i].v > 0)
            continue;
        /* where the 0 was written (the key, or the --set that wrote it), else the file */
        g_autofree char *where = ppsim_scenario_where(sc, need[i].key);
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                    "%s: '%s' is not set (0): the kernel model needs it; set it, or set "
                    "'hardware.gpu.efficiency' to time ops as FLOPs / (peak x efficiency)",
                    where, need[i].key);
        return FALSE;
    }
    return TRUE;
}

/* ---- one layer ------------------------------------------------------------------------- */

typedef struct {
    double k[PPSIM_KERN_N]; /* seconds per kernel class */
    double gemm_flops;      /* of the GEMMs (what TP overlap may hide behind) */
} Pass;

typedef struct {
    Pass f, b, w;
    Pass attn_f;       /* the attention core's forward: what selective recompute re-runs */
    Pass moe_f;        /* an MoE layer's MLP block forward: what recompute: moe re-runs */
    double moe_tp_f;   /* ... and its exposed TP collectives (s) */
    Pass moe_b, moe_w; /* the block's backward and wgrad (an F&B pair's parts, overlap.h) */
    double moe_tp_b;   /* ... and the backward's exposed TP collectives (s) */
    Pass mla_up_f;     /* MLA's up-projections and rotary: what recompute: mla_up_proj re-runs */
    double mla_up_tp;  /* ... and the latents' all-gather that shows (s) */
    double tp_f, tp_b; /* exposed TP collectives (s) */
    double cp_f, cp_b; /* exposed ring-attention transfers (s) */
} LayerTimes;

typedef struct {
    const PpsimScenario *sc;
    PpsimGpuSpec gpu;
    PpsimGpuSpec lin; /* the layers' linear GEMMs: gpu, or its FP8 side */
    PpsimCommLink tp_link, cp_link;
    int t, cp;
    gboolean sp;
    double b, s, sl, T, Tn, h, f, a, d, q, kv, V;
    PpsimAttnShape att; /* the attention block's linears and widths (MLA's or not) */
    gboolean mla;       /* model.mla */
    double dqk, dv;     /* a head's query/key and value widths (d, d without MLA) */
    double col_out;     /* the column-split and whole linears' outputs on one GPU ((q + 2kv)/t) */
    double col_w;       /* ... and their weights (h (q + 2kv) / t) */
    double o_in;        /* the output projection's input on one GPU (q / t) */
    gboolean swiglu, dropout, rotary;
    gboolean eager;    /* model.elementwise: eager (eager_* below) */
    gboolean fp8;      /* training.dtype: fp8 with its cast / transpose / scaling kernels */
    gboolean fp8_cs;   /* ... with current scaling (training.fp8_recipe: current) */
    gboolean fp8_bw;   /* ... with block scaling (training.fp8_recipe: blockwise) */
    double m;          /* microbatches a step (what a once-a-step kernel is spread over) */
    double dev_layers; /* layers on the GPU, all its chunks: what an amax update covers */
    double win_share;  /* a windowed layer's share of a causal layer's attention tiles */
    gboolean windowed; /* the layer being timed attends through model.sliding_window */
} Ctx;

/* FlashAttention-style kernels compute the scores in tiles of ATTN_TILE queries by ATTN_TILE
 * keys and skip the tiles the mask leaves empty ([FLASH-REPO] flash_fwd_kernel.h: n_block_min
 * from the window; FlashAttention-2 tiles of 64 or 128 each way, [FA2] §3.3; 128 x 128 an
 * assumption). */
#define ATTN_TILE 128.0

/* The tiles a causal sliding window of @w keys leaves over @s tokens, as a share of the
 * causal mask's: a query tile starting at token i needs the key tiles from the one holding
 * i - w + 1 to its own. Windows at least as long as the sequence give 1. */
static double
window_share(double s, double w)
{
    if (w <= 0 || w >= s)
        return 1.0;
    double nb = ceil(s / ATTN_TILE), tiles = 0.0;
    for (double qb = 0; qb < nb; qb++)
        tiles += qb - floor(MAX(0.0, qb * ATTN_TILE - w + 1.0) / ATTN_TILE) + 1.0;
    return tiles / (nb * (nb + 1.0) / 2.0);
}

static double
pass_total(const Pass *p)
{
    return p->k[PPSIM_KERN_GEMM] + p->k[PPSIM_KERN_ATTENTION] + p->k[PPSIM_KERN_MEMORY];
}

static void
add_gemm_on(const PpsimGpuSpec *g, Pass *f, Pass *b, Pass *w, double M, double N, double K)
{
    f->k[PPSIM_KERN_GEMM] += ppsim_gemm_seconds(g, M, N, K, 1);
    if (b != NULL)
        b->k[PPSIM_KERN_GEMM] += ppsim_gemm_seconds(g, M, K, N, 1);
    if (w != NULL)
        w->k[PPSIM_KERN_GEMM] += ppsim_gemm_seconds(g, K, N, M, 1);
}

/* A 16-bit GEMM (the LM head) */
static void
add_gemm(Ctx *c, Pass *f, Pass *b, Pass *w, double M, double N, double K)
{
    add_gemm_on(&c->gpu, f, b, w, M, N, K);
}

/* A linear layer's GEMM, in the scenario's training.dtype */
static void
add_linear(Ctx *c, Pass *f, Pass *b, Pass *w, double M, double N, double K)
{
    add_gemm_on(&c->lin, f, b, w, M, N, K);
}

static void
add_mem(Ctx *c, Pass *p, int kind, double bytes)
{
    p->k[kind] += ppsim_mem_seconds(&c->gpu, bytes);
}

static void
link_of(const PpsimHardware *hw, int group, int stride, PpsimCommLink *out)
{
    double bw = 0;
    PpsimTime lat = 0;
    ppsim_par_group_link(hw, group, stride, &bw, &lat);
    gboolean intra = (gint64)group * stride <= hw->gpus_per_node;
    out->bus_bytes_per_s = bw * (intra ? hw->nvlink_bus_efficiency : hw->network_bus_efficiency);
    out->alpha_s = (double)lat / PPSIM_PS_PER_S;
}

/* Seconds of NCCL's hierarchical all-reduce of @bytes over @n ranks, @local of them on each
 * node: NVLink within a node, the NICs across nodes. */
static double
hier_allreduce_s(const PpsimHardware *hw, double bytes, int n, int local)
{
    PpsimCommLink intra, inter;
    link_of(hw, 2, 1, &intra);
    link_of(hw, hw->gpus_per_node + 1, 1, &inter);
    return ppsim_coll_allreduce_hier_s(&intra, &inter, bytes, n, local);
}

static void
ctx_init(Ctx *c, const PpsimScenario *sc, gboolean fp8_scaling)
{
    const PpsimModel *m = &sc->model;
    const PpsimParallel *par = &sc->parallel;
    c->sc = sc;
    ppsim_kernels_gpu(&sc->hardware, &c->gpu);
    c->gpu.attn_eff = ppsim_attention_efficiency(&sc->hardware, m->attention_kernel, NULL);
    c->gpu.attn_eff_bwd = ppsim_attention_backward_efficiency(&sc->hardware, m->attention_kernel);
    if (c->gpu.attn_eff_bwd <= 0)
        c->gpu.attn_eff_bwd = c->gpu.attn_eff;
    c->lin = c->gpu;
    if (sc->training.dtype == PPSIM_DTYPE_FP8) {
        c->lin.peak_flops = sc->hardware.gpu_peak_flops_fp8;
        c->lin.gemm_eff = sc->hardware.gpu_gemm_efficiency_fp8;
        c->lin.elem_bytes = 1.0;
    }
    c->t = par->present ? par->tp : 1;
    c->cp = par->present ? par->cp : 1;
    c->sp = par->present && par->sequence_parallel && c->t > 1;
    c->b = sc->training.microbatch_size;
    c->s = m->seq_len;
    c->sl = c->s / c->cp;
    c->T = c->b * c->sl;
    c->Tn = c->sp ? c->T / c->t : c->T;
    c->h = m->hidden;
    c->f = m->ffn_hidden;
    c->a = m->heads;
    c->q = ppsim_model_q_width(m);
    c->d = c->q / c->a;
    c->kv = ppsim_model_kv_width(m);
    ppsim_model_attn_shape(m, &c->att);
    c->mla = m->mla.kv_lora_rank > 0;
    c->dqk = c->mla ? c->att.qk / c->a : c->d;
    c->dv = c->mla ? c->att.out / c->a : c->d;
    c->o_in = c->att.out / c->t;
    c->col_out = c->col_w = 0.0;
    for (int i = 0; i < c->att.n_linear; i++) {
        const double out = c->att.linear[i].out, in = c->att.linear[i].in;
        if (c->att.linear[i].split == PPSIM_ATTN_ROW)
            continue;
        double o = c->att.linear[i].split == PPSIM_ATTN_COLUMN ? out / c->t : out;
        c->col_out += o;
        c->col_w += in * o;
    }
    c->V = m->vocab;
    c->swiglu = m->mlp == PPSIM_MLP_SWIGLU;
    c->dropout = ppsim_model_dropout(m);
    c->rotary = ppsim_model_rotary(m);
    c->eager = m->elementwise == PPSIM_ELEMENTWISE_EAGER;
    c->fp8 = fp8_scaling && sc->training.dtype == PPSIM_DTYPE_FP8;
    c->fp8_cs = c->fp8 && sc->training.fp8_recipe == PPSIM_FP8_CURRENT;
    c->fp8_bw = c->fp8 && sc->training.fp8_recipe == PPSIM_FP8_BLOCKWISE;
    c->m = MAX(1, sc->training.microbatches);
    c->dev_layers = (double)m->layers / MAX(1, sc->training.pp);
    c->win_share = window_share(c->s, m->sliding_window);
    c->windowed = FALSE;
    link_of(&sc->hardware, c->t, 1, &c->tp_link);
    link_of(&sc->hardware, c->cp, c->t, &c->cp_link);
}

/* The attention core of one layer: forward into @f, backward into @b. */
static void
layer_attention(Ctx *c, Pass *f, Pass *b)
{
    const PpsimModel *m = &c->sc->model;
    double heads = c->a / c->t, batch = c->b * heads;
    if (m->flash_attention) {
        /* queries of this rank against every key of the sequence (cp ranks share it) */
        double flops = 2.0 * c->b * c->sl * c->s * (c->dqk + c->dv) * heads *
                       (m->causal ? 0.5 : 1.0) * (c->windowed ? c->win_share : 1.0);
        double io = EL * c->T * ((c->dqk + c->dv) * heads + (c->att.k + c->att.v) / c->t);
        f->k[PPSIM_KERN_ATTENTION] += ppsim_kernel_seconds(&c->gpu, flops, c->gpu.attn_eff, io);
        b->k[PPSIM_KERN_ATTENTION] +=
            ppsim_kernel_seconds(&c->gpu, 2.5 * flops, c->gpu.attn_eff_bwd, 2.0 * io);
        return;
    }
    double sl = c->sl, s = c->s, dk = c->dqk, dv = c->dv, scores = batch * sl * s;
    double *fa = &f->k[PPSIM_KERN_ATTENTION], *ba = &b->k[PPSIM_KERN_ATTENTION];
    *fa += ppsim_gemm_seconds(&c->gpu, sl, s, dk, batch); /* QK^T */
    *fa += ppsim_mem_seconds(&c->gpu, 2.0 * EL * scores); /* scale, mask, softmax */
    if (c->dropout)
        *fa += ppsim_mem_seconds(&c->gpu, (2.0 * EL + 1) * scores); /* dropout */
    *fa += ppsim_gemm_seconds(&c->gpu, sl, dv, s, batch);           /* AV */
    *ba += ppsim_gemm_seconds(&c->gpu, sl, s, dv, batch);           /* dP = dO V^T */
    *ba += ppsim_gemm_seconds(&c->gpu, s, dv, sl, batch);           /* dV = P^T dO */
    if (c->dropout)
        *ba += ppsim_mem_seconds(&c->gpu, (2.0 * EL + 1) * scores); /* dropout backward */
    *ba += ppsim_mem_seconds(&c->gpu, 3.0 * EL * scores);           /* softmax backward */
    *ba += ppsim_gemm_seconds(&c->gpu, sl, dk, s, batch);           /* dQ = dS K */
    *ba += ppsim_gemm_seconds(&c->gpu, s, dk, sl, batch);           /* dK = dS^T Q */
}

/* FP8 with Transformer Engine 1.x's delayed scaling ([TE] v1.10, that of the NeMo 24.09
 * container most [DGXC] recipes run; v1.6 of GPT-3's 24.05 container does the same): the
 * bytes of the kernels FP8 adds to one layer on one GPU, per microbatch. Megatron-Core builds
 * a layer from TE's LayerNormLinear (QKV, fc1: the norm fused in) and Linear (attention
 * output, fc2; [MEG] core_r0.9.0 `gpt_layer_specs.py`), the activation being Megatron's own
 * bf16 kernel. Per element, with sequence parallelism (sp)
 * or without:
 *  - LayerNormLinear forward: the norm writes the FP8 GEMM input itself, 1 byte instead of
 *    2 (`_apply_normalization` with an FP8 output; the all-gather then moves FP8). Its
 *    backward casts the output gradient (T x out, bf16) to FP8 and its transpose in one
 *    kernel (`fp8_cast_transpose_fused`: read 2, write 1 + 1) before the dgrad, and the wgrad
 *    transposes the gathered norm output (`fp8_transpose`: read 1, write 1, T x h).
 *  - Linear forward: its bf16 input (the attention output, T x h/t; the activation, T x
 *    f/t) cast to FP8 (`cast_to_fp8`: 2 + 1); without sp with its transpose in the same
 *    kernel (2 + 2), else the wgrad transposes it (1 + 1). Backward: with sp the output
 *    gradient (T/t x h) is cast (2 + 1) and all-gathered in FP8, and the wgrad transposes the
 *    gathered T x h (1 + 1) (`grad_output_preprocess`); without sp one cast + transpose of
 *    T x h (2 + 2).
 *  - Weights: an FP8 copy with its transpose, cast from the bf16 weight once a step (the
 *    schedule sets `is_first_microbatch` on a step's first microbatch and Megatron's TE
 *    layers pass it on, [MEG] core_r0.9.0 `schedules.py`, `transformer_engine.py`; TE refills
 *    its cached workspace only then, `get_fp8_workspace`): 2 + 1 + 1 bytes a weight element,
 *    spread here over the step's microbatches. (With FP8 weights, NeMo's `fp8_params`, the
 *    optimizer writes the FP8 weight and TE refills only the transpose, 1 + 1.)
 *  - Amax and scale update: at the end of each fp8_autocast region (a model chunk's forward,
 *    [MEG] core_r0.9.0 `transformer_block.py`) and after its backward,
 *    `reduce_and_update_fp8_tensors` concatenates the latest amaxes of every FP8 module
 *    registered on the GPU (all its chunks' layers), all-reduces them (MAX, on the compute
 *    stream) over the amax reduction group, the tp x dp x cp ranks of the stage ([MEG]
 *    `parallel_state.py` `get_amax_reduction_group(with_context_parallel=True)`: amax_reduce
 *    below) and updates each one's amax history and scale in one fused kernel
 *    (`fused_amax_and_scale_update_after_reduction`): per tensor the history (1024 fp32
 *    entries, the recipes' fp8_amax_history_len) read and written back rolled, the amax and
 *    scale read, the scale and its inverse written; 3 tensors a GEMM forward (input, weight,
 *    output), 2 backward (the gradients); the concatenation reads and writes 4 bytes a
 *    tensor. */
#define FP8_HISTORY 1024.0

/* Current scaling ([TE] v2.x `Float8CurrentScalingQuantizer`): before a cast whose input no
 * fused kernel measured, a pass reading the bf16 tensor for its amax (`nvte_compute_amax`),
 * then the scale computed from it (`nvte_compute_scale_from_amax`, a one-value kernel,
 * counted as 8 bytes: its launch). Appends both to @list when @cs, for @n elements. */
#define FP8_SCALE_KERNEL 8.0

static void
fp8_amax(double *list, int *len, gboolean cs, double n)
{
    if (!cs)
        return;
    list[(*len)++] = EL * n;
    list[(*len)++] = FP8_SCALE_KERNEL;
}

/* Block scaling ([TE] v2.x `Float8BlockQuantizer`, Megatron-Core's `--fp8-recipe blockwise`,
 * DeepSeek-V3's recipe [DSV3] §3.3.2): a scale for each 1 x 128 block of an activation or a
 * gradient and each 128 x 128 block of a weight, found by the quantizing kernel, which writes
 * the row-wise copy the next GEMM reads and the column-wise copy the wgrad reads in one pass
 * (read 2, write 1 + 1: Q below). The norms cannot write it (`UNFUSED`: bf16, then Q). With
 * sequence parallelism both copies of an all-gathered tensor are gathered (the quantizer
 * gathers column-wise data: 2 bytes a value, as bf16) and the column-wise one transposed
 * after the gather on Hopper (read 1, write 1: `_post_process_fp8_blockwise_gather`). No amax
 * history, no amax all-reduce.
 *
 * TE's own H200 measurement ([TE-GEMM], a 4096-wide layer's twelve GEMMs of 15,872 tokens
 * through `te.Linear`, each call quantizing its input and its weight) times block scaling's
 * quantization at FP8_BLOCK_COST times delayed scaling's cast + transpose of the same tensors,
 * the same 4 bytes an element: (22.882 - 16.785) / (18.978 - 16.785) ms, 16.785 being the
 * GEMMs alone (pre-quantized, the same kernel for both per-tensor recipes), block scaling's
 * GEMMs taken to run as fast (its pre-quantized GEMMs were not measured on Hopper; [TE-GEMM]
 * puts the gap on "computing per-block scale factors for both rowwise and columnwise data").
 * Each Q is counted as FP8_BLOCK_COST times its bytes: FP8_BLOCK_Q a quantized element. */
#define FP8_BLOCK_COST ((22.882 - 16.785) / (18.978 - 16.785))
#define FP8_BLOCK_Q (4.0 * FP8_BLOCK_COST)

static void
fp8_block_kernels(const Ctx *c, gboolean mlp, PpsimFp8Kernels *k)
{
    double T = c->T, Tn = c->Tn, h = c->h, t = c->t, ft = mlp ? c->f / t : 0.0;
    double qkv = c->col_out, fo = (c->swiglu ? 2.0 : 1.0) * ft;
    const double Q = FP8_BLOCK_Q;
    int norms = mlp ? 2 : 1;   /* an MoE layer's MLP norm feeds the router in bf16 */
    int linears = mlp ? 2 : 1; /* attention output, fc2 */
    /* LayerNormLinear (QKV, fc1): the norm output quantized (the local shard with sp, then
     * the gathered column-wise copy transposed); backward, the output gradient quantized */
    for (int i = 0; i < norms; i++) {
        k->f[k->nf++] = Q * Tn * h;
        if (c->sp)
            k->f[k->nf++] = 2.0 * T * h;
    }
    k->b[k->nb++] = Q * T * qkv;
    if (mlp)
        k->b[k->nb++] = Q * T * fo;
    /* Linear (attention output, fc2): its input quantized; backward, the output gradient
     * (the local shard with sp, then the gathered column-wise copy transposed) */
    double in[2] = {c->o_in, ft};
    for (int i = 0; i < linears; i++) {
        k->f[k->nf++] = Q * T * in[i];
        k->b[k->nb++] = Q * (c->sp ? Tn : T) * h;
        if (c->sp)
            k->b[k->nb++] = 2.0 * T * h;
    }
    /* weights, once a step, in 128 x 128 blocks */
    k->weight[0] = Q * c->col_w;
    k->weight[1] = Q * c->o_in * h;
    k->weight[2] = Q * h * fo;
    k->weight[3] = Q * ft * h;
}

static void
fp8_kernels(const Ctx *c, gboolean mlp, PpsimFp8Kernels *k)
{
    *k = (PpsimFp8Kernels){0};
    if (!c->fp8)
        return;
    if (c->fp8_bw) {
        fp8_block_kernels(c, mlp, k);
        return;
    }
    double T = c->T, Tn = c->Tn, h = c->h, t = c->t, ft = mlp ? c->f / t : 0.0;
    double qkv = c->col_out, fo = (c->swiglu ? 2.0 : 1.0) * ft;
    gboolean cs = c->fp8_cs;
    int norms = mlp ? 2 : 1;   /* an MoE layer's MLP norm feeds the router in bf16 */
    int linears = mlp ? 2 : 1; /* attention output, fc2 */
    k->norm_saved = cs ? 0.0 : norms * (EL - 1.0) * Tn * h;
    /* current scaling: the two norms write bf16 and their amax (`FUSED_NORM_AMAX_FP8`), then
     * the scale is computed and the output cast to FP8 */
    for (int i = 0; cs && i < norms; i++) {
        k->f[k->nf++] = FP8_SCALE_KERNEL;
        k->f[k->nf++] = 3.0 * Tn * h;
    }
    /* LayerNormLinear (QKV, fc1): the output gradient's cast + transpose; the wgrad's
     * transpose of the norm output */
    fp8_amax(k->b, &k->nb, cs, T * qkv);
    k->b[k->nb++] = 4.0 * T * qkv;
    k->w[k->nw++] = 2.0 * T * h;
    if (mlp) {
        fp8_amax(k->b, &k->nb, cs, T * fo);
        k->b[k->nb++] = 4.0 * T * fo;
        k->w[k->nw++] = 2.0 * T * h;
    }
    /* Linear (attention output, fc2) */
    double in[2] = {c->o_in, ft};
    for (int i = 0; i < linears; i++) {
        fp8_amax(k->f, &k->nf, cs, T * in[i]);
        if (c->sp) {
            k->f[k->nf++] = 3.0 * T * in[i]; /* cast */
            k->w[k->nw++] = 2.0 * T * in[i]; /* its transpose, for the wgrad */
            fp8_amax(k->b, &k->nb, cs, Tn * h);
            k->b[k->nb++] = 3.0 * Tn * h; /* the gradient's cast, before the all-gather */
            k->w[k->nw++] = 2.0 * T * h;  /* the gathered gradient's transpose */
        } else {
            k->f[k->nf++] = 4.0 * T * in[i]; /* cast + transpose */
            fp8_amax(k->b, &k->nb, cs, T * h);
            k->b[k->nb++] = 4.0 * T * h;
        }
    }
    /* weights, once a step: QKV, attention output, fc1, fc2 (current scaling reads each
     * weight once more for its amax) */
    double wb = cs ? 4.0 + EL : 4.0;
    k->weight[0] = wb * c->col_w;
    k->weight[1] = wb * c->o_in * h;
    k->weight[2] = wb * h * fo;
    k->weight[3] = wb * ft * h;
    if (cs) /* no amax history to update */
        return;
    /* amax / scale update over the GPU's layers: 4 GEMMs, 3 tensors forward, 2 backward */
    double per = 2.0 * 4.0 * FP8_HISTORY + 16.0;
    k->update_f[0] = c->dev_layers * 4 * 3 * 8.0;
    k->update_f[1] = c->dev_layers * 4 * 3 * per;
    k->update_b[0] = c->dev_layers * 4 * 2 * 8.0;
    k->update_b[1] = c->dev_layers * 4 * 2 * per;
}

/* Seconds of delayed scaling's amax all-reduce of @bytes over the stage's tp x dp x cp ranks
 * (the amax reduction group): NCCL's hierarchical all-reduce, as the DP reduction's, with
 * the group's members on a node (its tp x cp ranks times the dp replicas there) reducing on
 * NVLink. Latency-bound: a few hundred bytes. */
static double
amax_reduce(const Ctx *c, double bytes)
{
    const PpsimScenario *sc = c->sc;
    const PpsimParallel *par = &sc->parallel;
    int dp = par->present ? par->dp : 1, n = c->t * c->cp * dp;
    if (n <= 1)
        return 0.0;
    const PpsimHardware *hw = &sc->hardware;
    int local = c->t * c->cp * ppsim_par_group_per_node(hw, dp, ppsim_par_dp_stride(sc));
    return hier_allreduce_s(hw, bytes, n, MIN(local, n));
}

/* ---- eager elementwise kernels (model.elementwise: eager) ------------------------------
 *
 * PyTorch without torch.compile runs each elementwise operation of the Llama reference code
 * ([TITAN-REPO] at 9dec370: `models/norms.py` RMSNorm, `models/llama/model.py`
 * apply_rotary_emb, repeat_kv, FeedForward) as its own kernel, and autograd runs each one's
 * backward formula as written ([PT-AG]). Bytes per element, fp32 4 and bf16 2. */

/* fp32 RMSNorm of @n elements (tokens x h), rows of @h: y = (x32 * rsqrt(mean(x32^2) + eps))
 * .type_as(x) * w, x32 = x.float(). Forward, 36 bytes an element in eight kernels: cast
 * 2 + 4, pow 4 + 4, mean 4, + eps and rsqrt (a value a row), multiply 4 + 4, cast back 4 + 2,
 * times the weight 2 + 2. Backward, 92 bytes in fifteen: the weight's product (2 + 2) and
 * its gradient (product 2 + 2 + 2, sum over tokens 2), the cast's (2 + 4), the product's
 * two sides (g r: 4 + 4; g x32 summed over the row: 4 + 4 + 4, then 4), rsqrt's (two
 * kernels over a value a row; + eps passes the gradient through), mean's expanded gradient
 * divided by h (4), pow's `grad * (2 * x32.pow(1))` (copy 4 + 4, scale 4 + 4, product
 * 4 + 4 + 4), the two gradients of x32 added (4 + 4 + 4), cast back (4 + 2). */
static void
eager_norm(Ctx *c, Pass *f, Pass *b, double n, double h)
{
    int M = PPSIM_KERN_MEMORY;
    double rows = n / h, row = 8.0 * rows; /* a kernel over one fp32 value a row */
    const double fwd[] = {6, 8, 4, 8, 6, 4};
    for (guint i = 0; i < G_N_ELEMENTS(fwd); i++)
        add_mem(c, f, M, fwd[i] * n);
    add_mem(c, f, M, row); /* + eps */
    add_mem(c, f, M, row); /* rsqrt */
    const double bwd[] = {4, 6, 2, 6, 8, 12, 4, 4, 8, 8, 12, 12, 6};
    for (guint i = 0; i < G_N_ELEMENTS(bwd); i++)
        add_mem(c, b, M, bwd[i] * n);
    add_mem(c, b, M, row); /* rsqrt backward: result^3 */
    add_mem(c, b, M, row); /* ... times -grad / 2 */
}

/* Rotary on @n elements of q or k: view as fp32 complex pairs (cast 2 + 4), multiply by the
 * frequencies (4 + 4), cast back (4 + 2); the backward the same three in reverse. */
static void
eager_rotary(Ctx *c, Pass *f, Pass *b, double n)
{
    int M = PPSIM_KERN_MEMORY;
    const double k[] = {6, 8, 6};
    for (guint i = 0; i < G_N_ELEMENTS(k); i++) {
        add_mem(c, f, M, k[i] * n);
        add_mem(c, b, M, k[i] * n);
    }
}

/* SwiGLU over @n elements (tokens x f): silu(a) (2 + 2), times b (2 + 2 + 2); backward the
 * product's two gradients (2 + 2 + 2 each) and silu's (2 + 2 + 2). */
static void
eager_swiglu(Ctx *c, Pass *f, Pass *b, double n)
{
    int M = PPSIM_KERN_MEMORY;
    add_mem(c, f, M, 4.0 * n);
    add_mem(c, f, M, 6.0 * n);
    for (int i = 0; i < 3; i++)
        add_mem(c, b, M, 6.0 * n);
}

static double
gemm_seconds(const Pass *p)
{
    return p->k[PPSIM_KERN_GEMM];
}

/* Transformer Engine's userbuffers overlap of sequence parallelism's collectives with the
 * GEMMs beside them, by its default methods ([TE] `module/base.py` `initialize_ub`): the
 * all-gathers by ring exchange, the forward's reduce-scatters pipelined, the backward's
 * reduce-scatters in bulk. PyTorch's async TP (micro-pipelined, [TITAN-REPO]) is counted as
 * the same. Each function returns what its pair adds to the GEMM the pass already counts.
 * The pipelined reduce-scatter's GEMM chunks, and its communication kernel's SMs, which the
 * GEMM does not get ([TE] num_sm; [NEMO]'s H100 configs keep 24 and 16 SMs from the
 * projection's and fc2's GEMMs, set_sm_margin): */
#define TE_PIPELINE_SPLITS 4.0
#define TE_PIPELINE_SMS 16

/* Ring exchange: the GEMM in tp chunks of M / tp rows, the collective in tp - 1 steps beside
 * them; one chunk needs no step (the all-gather's local shard), so the pair takes max(the
 * GEMM, comm + one chunk), plus the chunks' extra launches. The chunks keep the whole GEMM's
 * efficiency: cuBLAS picks their tiles, and gemm.c's one-tile quantization would overstate
 * what a GEMM 1/tp as high loses. */
static double
tp_split_s(const Ctx *c, double comm, double whole)
{
    return MAX(0.0, comm - whole * (c->t - 1) / c->t) + (c->t - 1) * c->lin.launch_s;
}

static double
tp_split(const Ctx *c, double comm, double M, double N, double K)
{
    return tp_split_s(c, comm, ppsim_gemm_seconds(&c->lin, M, N, K, 1));
}

/* Pipelined: the GEMM in 4 chunks on all but 16 SMs, each chunk's share of the
 * reduce-scatter after it, so the last share always shows: max(GEMM + comm / 4,
 * GEMM / 4 + comm). */
static double
tp_pipeline(const Ctx *c, double comm, double M, double N, double K)
{
    PpsimGpuSpec g = c->lin;
    if (g.sms > 2 * TE_PIPELINE_SMS)
        g.sms -= TE_PIPELINE_SMS;
    double n = TE_PIPELINE_SPLITS, whole = ppsim_gemm_seconds(&c->lin, M, N, K, 1);
    double margin = ppsim_gemm_seconds(&g, M, N, K, 1);
    return MAX(margin + comm / n, margin / n + comm) + (n - 1) * g.launch_s - whole;
}

/* The MLP activation over @n elements (tokens x width): SwiGLU reads gate and up and writes
 * their product, its backward reads them and the gradient and writes two (eager: as PyTorch's
 * separate kernels); GELU reads and writes, its backward reads two and writes one. */
static void
mlp_activation(Ctx *c, Pass *f, Pass *b, double n)
{
    int M = PPSIM_KERN_MEMORY;
    if (c->swiglu && c->eager) {
        eager_swiglu(c, f, b, n);
    } else if (c->swiglu) {
        add_mem(c, f, M, 3.0 * EL * n);
        add_mem(c, b, M, 5.0 * EL * n);
    } else {
        add_mem(c, f, M, 2.0 * EL * n);
        add_mem(c, b, M, 3.0 * EL * n);
    }
}

/* ---- an MoE layer's MLP (model.moe; moe.h) ------------------------------------------------
 *
 * Megatron-Core's all-to-all token dispatcher ([MEG] `moe/token_dispatcher.py`
 * MoEAlltoAllTokenDispatcher: permute, all-to-all over EP, all-gather over TP, sort by local
 * expert; the experts; sort back, reduce-scatter over TP, all-to-all, unpermute) with the
 * experts' weights split over the TP group as the dense MLP's are (expert TP = TP), on one GPU,
 * per microbatch: T' = T / t tokens of its own (sequence parallel), S = k load T routed slots
 * after the TP all-gather (k = top_k, load the busiest EP rank's factor, moe.h), E / ep local
 * experts of S / (E / ep) tokens each. With expert tensor parallelism etp < t
 * (parallel.etp) the experts are split etp ways instead of t, and gather the tokens of their
 * etp group only: S = k load T etp / t, widths fe/etp, the slots' collectives over etp GPUs
 * (none with etp 1); the shared experts stay split over t.
 *  - Router: a T' x E x h GEMM; softmax and top-k over the fp32 scores (read 4, write 4 for
 *    each, then the k probabilities), their backward alike.
 *  - Permute: each token's k copies gathered (read and write 2 bytes a value, k T' h); sort
 *    by local expert after the all-gather (read and write, S h; none with one local expert);
 *    the combine's sort back (S h) and unpermute (read k T' h, the probability-weighted sum
 *    written T' h). The backward moves the same bytes.
 *  - Experts: grouped GEMMs, E / ep of them per launch, S / (E / ep) x (2)fe/t x h (gate and
 *    up with SwiGLU) and S / (E / ep) x h x fe/t; their dgrad and wgrad; the activation over
 *    S fe/t as the dense MLP's. Shared experts: a dense MLP of width shared x fe.
 *  - TP (t > 1): the dispatched slots all-gathered and reduce-scattered over the etp group
 *    (S h, 2 bytes), and the shared experts' input all-gather and output reduce-scatter
 *    (T h) over t, as the dense MLP's.
 *  - FP8: the experts' GEMMs at the FP8 rate; their inputs cast (read 2, write 1) and
 *    transposed for the wgrad (1 + 1), their output gradients cast and transposed (2 + 2);
 *    current scaling's amax pass before each cast; block scaling's one quantizing pass for
 *    each (fp8_block_kernels); the local experts' weights cast once a step. The EP
 *    all-to-alls themselves are moe.c's. */
/* The routed slots one GPU's experts compute: k load T' of each GPU of its etp group. */
static double
moe_slots(const Ctx *c)
{
    const PpsimMoe *moe = &c->sc->model.moe;
    return moe->top_k * ppsim_moe_load(moe) * c->T * ppsim_moe_etp(c->sc) / c->t;
}

static int
moe_local_experts(const Ctx *c)
{
    const PpsimParallel *par = &c->sc->parallel;
    int ep = par->present ? par->ep : 1;
    return MAX(1, c->sc->model.moe.experts / ep);
}

/* The FP8 kernels around a grouped GEMM of @S rows from width @in to width @out. */
static void
moe_fp8_gemm(Ctx *c, Pass *f, Pass *b, Pass *w, double S, double in, double out)
{
    int M = PPSIM_KERN_MEMORY;
    if (c->fp8_bw) { /* block scaling: each tensor's two copies in one quantizing pass */
        add_mem(c, f, M, FP8_BLOCK_Q * S * in);
        add_mem(c, b, M, FP8_BLOCK_Q * S * out);
        return;
    }
    if (c->fp8_cs) {
        add_mem(c, f, M, EL * S * in);
        add_mem(c, f, M, FP8_SCALE_KERNEL);
        add_mem(c, b, M, EL * S * out);
        add_mem(c, b, M, FP8_SCALE_KERNEL);
    }
    add_mem(c, f, M, 3.0 * S * in);
    add_mem(c, w, M, 2.0 * S * in);
    add_mem(c, b, M, 4.0 * S * out);
}

/* The MLP kernels of one MoE layer into @f, @b, @w; the seconds of its TP collectives per
 * pass: the token dispatcher's into *@tp, the shared experts' linears' into *@tp_shared. */
static void
moe_mlp(Ctx *c, Pass *f, Pass *b, Pass *w, double *tp, double *tp_shared)
{
    const PpsimMoe *moe = &c->sc->model.moe;
    int M = PPSIM_KERN_MEMORY;
    double t = c->t, h = c->h, Tn = c->T / t, S = moe_slots(c), E = moe->experts;
    int etp = ppsim_moe_etp(c->sc);
    double fe = moe->expert_ffn_hidden / (double)etp, up = (c->swiglu ? 2.0 : 1.0) * fe;
    double k = moe->top_k;
    int local = moe_local_experts(c);
    /* router */
    add_gemm(c, f, b, w, Tn, E, h);
    for (int i = 0; i < 2; i++) { /* softmax, top-k */
        add_mem(c, f, M, 8.0 * Tn * E);
        add_mem(c, b, M, 8.0 * Tn * E);
    }
    /* permute, sort, sort back, unpermute: forward and backward alike */
    double perm =
        2.0 * EL * k * Tn * h + (local > 1 ? 4.0 * EL * S * h : 0.0) + EL * (k * Tn * h + Tn * h);
    add_mem(c, f, M, perm);
    add_mem(c, b, M, perm);
    /* the local experts: grouped GEMMs */
    double rows = S / local;
    const PpsimGpuSpec *g = &c->lin;
    f->k[PPSIM_KERN_GEMM] +=
        ppsim_gemm_seconds(g, rows, up, h, local) + ppsim_gemm_seconds(g, rows, h, fe, local);
    b->k[PPSIM_KERN_GEMM] +=
        ppsim_gemm_seconds(g, rows, h, up, local) + ppsim_gemm_seconds(g, rows, fe, h, local);
    w->k[PPSIM_KERN_GEMM] +=
        ppsim_gemm_seconds(g, h, up, rows, local) + ppsim_gemm_seconds(g, fe, h, rows, local);
    mlp_activation(c, f, b, S * fe);
    if (c->fp8) {
        moe_fp8_gemm(c, f, b, w, S, h, up);
        moe_fp8_gemm(c, f, b, w, S, fe, h);
        double wb = c->fp8_cs ? 4.0 + EL : c->fp8_bw ? FP8_BLOCK_Q : 4.0;
        f->k[M] += ppsim_mem_seconds(&c->gpu, wb * local * h * (up + fe)) / c->m;
    }
    /* shared experts: a dense MLP of their width */
    double fs = moe->shared_experts * moe->expert_ffn_hidden / t;
    if (fs > 0) {
        add_linear(c, f, b, w, c->T, (c->swiglu ? 2.0 : 1.0) * fs, h);
        add_linear(c, f, b, w, c->T, h, fs);
        mlp_activation(c, f, b, c->T * fs);
    }
    *tp = *tp_shared = 0.0;
    if (etp > 1) { /* the slots gathered over the etp group and scattered back */
        PpsimCommLink link;
        link_of(&c->sc->hardware, etp, 1, &link);
        double slots = EL * S * h;
        *tp = ppsim_coll_allgather_s(&link, slots, etp) +
              ppsim_coll_reduce_scatter_s(&link, slots, etp);
    }
    if (t > 1) {
        double tokens = EL * c->T * h;
        if (fs > 0)
            *tp_shared = ppsim_coll_allgather_s(&c->tp_link, tokens, c->t) +
                         ppsim_coll_reduce_scatter_s(&c->tp_link, tokens, c->t);
    }
}

/* A column-parallel linear (QKV, fc1: @N outputs per GPU) in the backward, as Megatron-LM
 * (`LinearWithGradAccumulationAndAsyncCommunication`: the all-reduce since 2021-09, with
 * sequence parallelism since 2022-03) and Transformer Engine (`_Linear.backward`, and its
 * userbuffers' bulk overlap) run it: its saved input shard all-gathered (@cag) beside its
 * dgrad GEMM, its input gradient sent beside its wgrad GEMM (reduce-scatter @crs; without
 * sequence parallelism all-reduce @car). What shows of the two. */
static double
column_backward_s(const Ctx *c, double dgrad, double wgrad, double cag, double crs, double car)
{
    return c->sp ? MAX(0.0, cag - dgrad) + MAX(0.0, crs - wgrad) : MAX(0.0, car - wgrad);
}

static double
column_backward(const Ctx *c, double N, double cag, double crs, double car)
{
    double dgrad = ppsim_gemm_seconds(&c->lin, c->T, c->h, N, 1);
    double wgrad = ppsim_gemm_seconds(&c->lin, c->h, N, c->T, 1);
    return column_backward_s(c, dgrad, wgrad, cag, crs, car);
}

/* The attention block's linears (ppsim_model_attn_shape) into @f, @b, @w: the column-split
 * ones on every token with out / tp outputs, the row-split one with in / tp inputs, MLA's whole
 * down-projections on the GPU's own tokens (its sequence-parallel share, else all of them).
 * Sets the column-split linears' forward, dgrad and wgrad seconds (what TP collectives may
 * hide behind). */
static void
attn_linears(Ctx *c, Pass *f, Pass *b, Pass *w, double *col_f, double *col_d, double *col_w)
{
    *col_f = *col_d = *col_w = 0.0;
    for (int i = 0; i < c->att.n_linear; i++) {
        double N = c->att.linear[i].out, K = c->att.linear[i].in, M = c->T;
        switch (c->att.linear[i].split) {
        case PPSIM_ATTN_COLUMN:
            N /= c->t;
            *col_f += ppsim_gemm_seconds(&c->lin, M, N, K, 1);
            *col_d += ppsim_gemm_seconds(&c->lin, M, K, N, 1);
            *col_w += ppsim_gemm_seconds(&c->lin, K, N, M, 1);
            break;
        case PPSIM_ATTN_ROW:
            K /= c->t;
            break;
        case PPSIM_ATTN_DUPLICATED:
            M = c->Tn;
            break;
        }
        add_linear(c, f, b, w, M, N, K);
    }
}

static void
layer_times(Ctx *c, gboolean moe, LayerTimes *lt)
{
    *lt = (LayerTimes){0};
    Pass *f = &lt->f, *b = &lt->b, *w = &lt->w;
    double T = c->T, Tn = c->Tn, h = c->h, t = c->t, ft = c->f / t;
    double up = (c->swiglu ? 2.0 : 1.0) * ft;
    /* GEMMs */
    double col_f, col_d, col_w;
    attn_linears(c, f, b, w, &col_f, &col_d, &col_w);
    if (c->mla) /* the column-split linears are MLA's up-projections */
        lt->mla_up_f.k[PPSIM_KERN_GEMM] = col_f;
    double attn_gemm_f = gemm_seconds(f), attn_gemm_b = gemm_seconds(b);
    double moe_tp = 0.0, disp_tp = 0.0, shared_tp = 0.0;
    if (moe) {
        Pass before = *f, before_b = *b, before_w = *w;
        moe_mlp(c, f, b, w, &disp_tp, &shared_tp);
        moe_tp = disp_tp + shared_tp;
        for (int k = 0; k < PPSIM_KERN_N; k++) {
            lt->moe_f.k[k] = f->k[k] - before.k[k];
            lt->moe_b.k[k] = b->k[k] - before_b.k[k];
            lt->moe_w.k[k] = w->k[k] - before_w.k[k];
        }
    } else {
        add_linear(c, f, b, w, T, up, h);
        add_linear(c, f, b, w, T, h, ft);
    }
    /* attention core */
    layer_attention(c, &lt->attn_f, b);
    for (int k = 0; k < PPSIM_KERN_N; k++)
        f->k[k] += lt->attn_f.k[k];
    /* memory-bound */
    int M = PPSIM_KERN_MEMORY;
    double act = Tn * h;
    /* delayed FP8: the norm writes the GEMM's FP8 input (current and block scaling: bf16,
     * fp8_kernels) */
    double norm_out = c->fp8 && !c->fp8_cs && !c->fp8_bw ? 1.0 : EL;
    if (c->mla) { /* MLA's query and KV latents, normed on the GPU's own tokens */
        add_mem(c, f, M, 2.0 * EL * Tn * c->att.latent);
        add_mem(c, b, M, 3.0 * EL * Tn * c->att.latent);
    }
    for (int i = 0; i < 2; i++) { /* two norms */
        if (c->eager) {
            eager_norm(c, f, b, act, h);
        } else {
            /* an MoE layer's second norm feeds the router and the permutation in bf16 */
            add_mem(c, f, M, (EL + (moe && i == 1 ? EL : norm_out)) * act);
            add_mem(c, b, M, 3.0 * EL * act);
        }
    }
    for (int i = 0; i < 2; i++) { /* after attention and after the MLP */
        if (!c->dropout) {
            add_mem(c, f, M, 3.0 * EL * act);
        } else {
            add_mem(c, f, M, (3.0 * EL + 1.0) * act);
            add_mem(c, b, M, (2.0 * EL + 1.0) * act);
        }
        add_mem(c, b, M, 3.0 * EL * act); /* the residual's two gradients */
    }
    if (!moe)
        mlp_activation(c, f, b, T * ft);
    if (c->rotary && c->eager) {
        eager_rotary(c, f, b, T * c->q / t);
        eager_rotary(c, f, b, T * c->kv / t);
    } else if (c->rotary && c->mla) {
        /* Megatron-Core's fused MLA rotary kernels: the queries read and written; the KV
         * up-projection's output and the shared rotary key read, K and V written */
        const PpsimAttnShape *at = &c->att;
        double kv_up = at->k - at->rope_k * c->a + at->v;
        double rot = EL * T * ((2.0 * at->qk + kv_up + at->k + at->v) / t + at->rope_k);
        add_mem(c, f, M, rot);
        add_mem(c, b, M, rot);
        add_mem(c, &lt->mla_up_f, M, rot);
    } else if (c->rotary) {
        double rot = 2.0 * EL * T * (c->q + c->kv) / t; /* q and k, read and written */
        add_mem(c, f, M, rot);
        add_mem(c, b, M, rot);
    }
    /* eager: K and V copied to every query head (expand + reshape), and the copies'
     * gradients summed back (2 + 2 an element of the q-wide copy, each way) */
    if (c->eager && c->kv < c->q) {
        for (int i = 0; i < 2; i++) {
            add_mem(c, f, M, EL * T * (c->kv + c->q) / t);
            add_mem(c, b, M, EL * T * (c->q + c->kv) / t);
        }
    }
    /* FP8's cast and transpose kernels, and each weight's once a step */
    PpsimFp8Kernels k8;
    fp8_kernels(c, !moe, &k8);
    for (int i = 0; i < k8.nf; i++)
        add_mem(c, f, M, k8.f[i]);
    for (int i = 0; i < k8.nb; i++)
        add_mem(c, b, M, k8.b[i]);
    for (int i = 0; i < k8.nw; i++)
        add_mem(c, w, M, k8.w[i]);
    for (int i = 0; c->fp8 && i < 4; i++)
        f->k[M] += ppsim_mem_seconds(&c->gpu, k8.weight[i]) / c->m;
    /* TP collectives: two per pass of the full activation (an MoE layer: the attention's, and
     * moe_mlp's); MLA's column-split linears gather the latents and the rotary key (their
     * input gradients reduced the same), which the attention's collectives move instead */
    const PpsimParallel *par = &c->sc->parallel;
    if (c->t > 1) {
        double bytes = EL * c->T * h, bytes_a = EL * c->T * c->att.gather;
        /* FP8: the all-gathers move the FP8 norm output (forward) and the FP8 output gradient
         * (backward) ([TE]: `gather_along_first_dim` after the cast); reduce-scatters bf16 */
        gboolean ag8 = c->fp8 && !c->fp8_bw; /* block: both copies */
        double cag = ppsim_coll_allgather_s(&c->tp_link, ag8 ? c->T * h : bytes, c->t);
        double crs = ppsim_coll_reduce_scatter_s(&c->tp_link, bytes, c->t);
        double car = ppsim_coll_allreduce_s(&c->tp_link, bytes, c->t);
        double cag_a =
            ppsim_coll_allgather_s(&c->tp_link, ag8 ? c->T * c->att.gather : bytes_a, c->t);
        double crs_a = ppsim_coll_reduce_scatter_s(&c->tp_link, bytes_a, c->t);
        double car_a = ppsim_coll_allreduce_s(&c->tp_link, bytes_a, c->t);
        double blocks = moe ? 1.0 : 2.0;
        /* the attention block's forward (the column side's gather, the projection's
         * reduction) and backward (the projection's output gradient gathered, the column
         * side's input gradient reduced); the MLP's the same, h wide both ways */
        double attn_f = c->sp ? cag_a + crs : car, attn_b = c->sp ? cag + crs_a : car_a;
        double mlp_pass = moe ? 0.0 : c->sp ? cag + crs : car;
        double attn_back = column_backward_s(c, col_d, col_w, cag_a, crs_a, car_a);
        /* re-running MLA's up-projections gathers their latents again */
        if (c->mla && c->sp)
            lt->mla_up_tp = par->tp_comm_overlap ? tp_split_s(c, cag_a, col_f) : cag_a;
        if (!par->tp_comm_overlap) {
            lt->moe_tp_f = lt->moe_tp_b = moe_tp;
            lt->tp_f = attn_f + mlp_pass + moe_tp;
            lt->tp_b = attn_b + mlp_pass + moe_tp;
            if (par->tp_async_backward) {
                /* the row-parallel linears (projection, fc2) all-gather their output
                 * gradient before their dgrad (without sp they send nothing backward) */
                double row = c->sp ? cag : 0.0;
                lt->tp_b = row + attn_back + moe_tp;
                if (!moe)
                    lt->tp_b += row + column_backward(c, up, cag, crs, car);
            }
        } else {
            /* forward: the all-gather split under the QKV GEMM (MLA: its up-projections), the
             * output projection's reduce-scatter under its GEMM; backward: the output
             * gradient's all-gather under the projection's dgrad, QKV's in bulk */
            lt->tp_f = tp_split_s(c, cag_a, col_f) + tp_pipeline(c, crs, T, h, c->o_in);
            lt->tp_b = tp_split(c, cag, T, c->o_in, h) + attn_back;
            if (moe) {
                /* the token dispatcher's all-gather and reduce-scatter over the expert-TP
                 * group are plain NCCL calls between kernels that need their data ([MEG]
                 * `moe/token_dispatcher.py`: gather_from_sequence_parallel_region before the
                 * experts, reduce_scatter_to_sequence_parallel_region after): Transformer
                 * Engine's overlap does not reach them. The shared experts' linears are
                 * Transformer Engine's, their collectives behind the block's GEMMs, in bulk */
                lt->moe_tp_f = disp_tp + MAX(0.0, shared_tp - (gemm_seconds(f) - attn_gemm_f));
                lt->tp_f += lt->moe_tp_f;
                lt->moe_tp_b = disp_tp + MAX(0.0, shared_tp - (gemm_seconds(b) - attn_gemm_b));
                lt->tp_b += lt->moe_tp_b;
            } else { /* the MLP's: fc1 and fc2 as QKV and the projection */
                lt->tp_f += tp_split(c, cag, T, up, h) + tp_pipeline(c, crs, T, h, ft);
                lt->tp_b += tp_split(c, cag, T, ft, h) + column_backward(c, up, cag, crs, car);
            }
        }
        /* current scaling with sp: the ranks agree on the scale of what they all-gather (the
         * norm outputs forward, the Linear output gradients backward) by all-reducing its
         * fp32 amax over the TP group before the cast, which nothing hides */
        if (c->fp8_cs && c->sp) {
            double amax = blocks * ppsim_coll_allreduce_s(&c->tp_link, 4.0, c->t);
            lt->tp_f += amax;
            lt->tp_b += amax;
        }
    }
    /* ring attention: cp - 1 steps of this rank's K and V block */
    if (c->cp > 1) {
        double block = EL * T * (c->att.k + c->att.v) / t;
        double step = ppsim_coll_allgather_s(&c->cp_link, block * c->cp, c->cp) / (c->cp - 1);
        double fa = pass_total(&lt->attn_f) / c->cp;
        lt->cp_f = (c->cp - 1) * MAX(0.0, step - fa);
        lt->cp_b = (c->cp - 1) * MAX(0.0, 2.0 * step - 2.5 * fa);
    }
}

/* ---- a stage ----------------------------------------------------------------------------- */

static PpsimTime
ps(double seconds)
{
    return ppsim_time_from_seconds(seconds);
}

/* The units a stage's per-unit passes run one kernel each for: its layers (MTP's too), the
 * embedding, the head. */
static double
stage_units(const PpsimStageCost *st)
{
    return ppsim_cost_stage_blocks(st) + (st->has_embedding ? 1 : 0) + (st->has_head ? 1 : 0);
}

void
ppsim_kernels_fill_zero3_copies(PpsimStageCost *st, const PpsimScenario *sc)
{
    const PpsimParallel *par = &sc->parallel;
    if (!ppsim_kernels_active(sc) || !par->present || par->zero < 3 ||
        par->zero3_layout != PPSIM_ZERO3_PER_PARAM || par->dp * par->cp <= 1)
        return;
    /* [PT-FSDP2] `foreach_all_gather_copy_out` (split_with_sizes_copy of the gathered
     * buffer into each parameter) and `foreach_reduce` (_chunk_cat of the gradients into the
     * reduce-scatter input, widened to the reduce dtype), on the compute stream */
    PpsimGpuSpec gpu;
    ppsim_kernels_gpu(&sc->hardware, &gpu);
    double units = stage_units(st);
    if (units <= 0 || st->params <= 0)
        return;
    double m = MAX(1, sc->training.microbatches);
    double out = 2.0 * EL * st->params / units;
    double in = (EL + ppsim_par_grad_reduce_bytes(sc)) * st->params / units / m;
    PpsimTime f = (PpsimTime)units * ps(ppsim_mem_seconds(&gpu, out));
    PpsimTime b = (PpsimTime)units * ps(ppsim_mem_seconds(&gpu, out) + ppsim_mem_seconds(&gpu, in));
    st->est.f_ps += f;
    st->est.b_ps += b;
    st->kern_f_ps[PPSIM_KERN_MEMORY] += f;
    st->kern_b_ps[PPSIM_KERN_MEMORY] += b;
}

double
ppsim_kernels_grad_accum_bytes(const PpsimScenario *sc)
{
    const PpsimTraining *tr = &sc->training;
    double m = MAX(1, tr->microbatches);
    switch (tr->grad_accumulation) {
    case PPSIM_GRAD_ACCUM_AUTOGRAD:
        /* AccumulateGrad: the first microbatch's gradient becomes .grad; each later one is
         * added in place (read both, write one), so (m - 1) / m of a pass a microbatch */
        return 3.0 * EL * (m - 1.0) / m;
    case PPSIM_GRAD_ACCUM_ADD:
        /* main_grad.add_(grad): read the 16-bit gradient, read and write the main one */
        return EL + 2.0 * ppsim_mem_grad_bytes_per_param(tr);
    case PPSIM_GRAD_ACCUM_CAST_ADD:
        /* [DS-BF16] bf16_optimizer.py `update_hp_grads`: hp_grad.add_(lp.grad.to(fp32)), the
         * cast into an fp32 temporary (read 2, write 4), then the add (read 4 + 4, write 4) */
        return EL + 4.0 + 4.0 + 4.0 + 4.0;
    default:
        return 0.0;
    }
}

void
ppsim_kernels_fill_grad_accumulation(PpsimStageCost *st, const PpsimScenario *sc)
{
    double per_param = ppsim_kernels_grad_accum_bytes(sc);
    double units = stage_units(st);
    if (!ppsim_kernels_active(sc) || per_param <= 0 || units <= 0 || st->params <= 0)
        return;
    /* one pass a unit (a layer, the embedding, the head) over its parameters, in W: the
     * gradients exist once the wgrad GEMMs have run (ZeRO-3 shards nothing here: FSDP
     * reduce-scatters instead, and a scenario says what its stack does) */
    PpsimGpuSpec gpu;
    ppsim_kernels_gpu(&sc->hardware, &gpu);
    PpsimTime w = (PpsimTime)units * ps(ppsim_mem_seconds(&gpu, per_param * st->params / units));
    st->est.w_ps += w;
    st->kern_w_ps[PPSIM_KERN_MEMORY] += w;
}

PpsimTime
ppsim_kernels_optimizer_ps(const PpsimStageCost *st, const PpsimScenario *sc)
{
    PpsimGpuSpec gpu;
    ppsim_kernels_gpu(&sc->hardware, &gpu);
    double bytes = sc->training.optimizer == PPSIM_OPTIMIZER_EAGER ? 92.0 : 34.0;
    return ps(ppsim_mem_seconds(&gpu, bytes * ppsim_mem_local_shard(st, sc)) + gpu.launch_s);
}

static void
pass_scale_add(Pass *dst, const Pass *src, double n)
{
    for (int k = 0; k < PPSIM_KERN_N; k++)
        dst->k[k] += n * src->k[k];
}

/* An F&B pair's parts of one MoE layer @one (cost-model.h pl_*): the MLP block's compute
 * with its exposed TP collectives, and the rest of the layer's (moe.c keeps the whole-stage
 * model where there is no all-to-all or B re-runs them). */
static void
pair_parts(PpsimStageCost *st, const LayerTimes *one, int n_moe)
{
    double mlp[3] = {pass_total(&one->moe_f) + one->moe_tp_f,
                     pass_total(&one->moe_b) + one->moe_tp_b, pass_total(&one->moe_w)};
    double all[3] = {pass_total(&one->f) + one->tp_f + one->cp_f,
                     pass_total(&one->b) + one->tp_b + one->cp_b, pass_total(&one->w)};
    for (int i = 0; i < 3; i++) {
        st->pl_mlp_ps[i] = ps(mlp[i]);
        st->pl_attn_ps[i] = MAX(0, ps(all[i]) - st->pl_mlp_ps[i]);
    }
    st->pair_layers = n_moe;
}

/* @dst += @n layers of @src */
static void
layer_times_add(LayerTimes *dst, const LayerTimes *src, double n)
{
    pass_scale_add(&dst->f, &src->f, n);
    pass_scale_add(&dst->b, &src->b, n);
    pass_scale_add(&dst->w, &src->w, n);
    pass_scale_add(&dst->attn_f, &src->attn_f, n);
    pass_scale_add(&dst->moe_f, &src->moe_f, n);
    dst->moe_tp_f += n * src->moe_tp_f;
    pass_scale_add(&dst->moe_b, &src->moe_b, n);
    pass_scale_add(&dst->moe_w, &src->moe_w, n);
    dst->moe_tp_b += n * src->moe_tp_b;
    pass_scale_add(&dst->mla_up_f, &src->mla_up_f, n);
    dst->mla_up_tp += n * src->mla_up_tp;
    dst->tp_f += n * src->tp_f;
    dst->tp_b += n * src->tp_b;
    dst->cp_f += n * src->cp_f;
    dst->cp_b += n * src->cp_b;
}

void
ppsim_kernels_fp8(const PpsimScenario *sc, PpsimFp8Kernels *out)
{
    Ctx c;
    ctx_init(&c, sc, TRUE);
    fp8_kernels(&c, TRUE, out);
}

/* What shows of a gradient reduction of @red seconds in one bucket per layer (@layers of
 * them) that reduce while the last backward (@back seconds) runs: at least the last
 * bucket's; none without layers to bucket. */
static double
bucket_exposed(double red, double back, int layers)
{
    if (layers <= 0)
        return red;
    double buckets = layers;
    return MAX(red / buckets, red - back * (1.0 - 1.0 / buckets));
}

/* The embedding's row gather (and dropout) into @F, its gradient's scatter-add into @B. */
static void
embedding_kernels(Ctx *c, Pass *F, Pass *B)
{
    int M = PPSIM_KERN_MEMORY;
    add_mem(c, F, M, 2.0 * EL * c->T * c->h); /* gather rows */
    if (c->dropout)
        add_mem(c, F, M, (2.0 * EL + 1.0) * c->Tn * c->h); /* embedding dropout */
    add_mem(c, B, M, 3.0 * EL * c->T * c->h);              /* gradient scatter-add */
}

/* A norm outside the layers (the final one, MTP's) over the GPU's Tn x h. */
static void
norm_kernels(Ctx *c, Pass *F, Pass *B)
{
    if (c->eager) {
        eager_norm(c, F, B, c->Tn * c->h, c->h);
    } else {
        add_mem(c, F, PPSIM_KERN_MEMORY, 2.0 * EL * c->Tn * c->h);
        add_mem(c, B, PPSIM_KERN_MEMORY, 3.0 * EL * c->Tn * c->h);
    }
}

/* The loss over the stage's T x V/t logits, as @impl runs it (PpsimCrossEntropy): its
 * memory-bound kernels into @F and @B, and the seconds of its TP collectives (returned). */
static double
loss_kernels(Ctx *c, int impl, Pass *F, Pass *B)
{
    int M = PPSIM_KERN_MEMORY;
    double logits = c->T * c->V / c->t, tp = 0.0;
    switch (impl) {
    case PPSIM_CE_TE:
        /* Transformer Engine's Triton kernels ([TE] pytorch/triton/cross_entropy.py): an
         * online-softmax pass reads the bf16 logits for each token's max and sum; after an
         * all-gather of (max, sum, target logit), 3 floats a token, the second kernel reads
         * them again and writes the gradient over them; backward scales it in place by each
         * token's loss gradient */
        add_mem(c, F, M, EL * logits);
        add_mem(c, F, M, 2.0 * EL * logits);
        add_mem(c, B, M, 2.0 * EL * logits);
        if (c->t > 1)
            tp = ppsim_coll_allgather_s(&c->tp_link, 12.0 * c->T * c->t, c->t);
        break;
    case PPSIM_CE_NATIVE:
        /* Megatron-Core's fused_vocab_parallel_cross_entropy ([MEG-CE] fusions), the same
         * steps as below in torch.compile'd kernels: the fp32 copy with its max; subtract,
         * exp and sum in place; divide in place; backward the update in place with the bf16
         * cast. Two all-reduces: the max, then the target logit and sum together */
        add_mem(c, F, M, (EL + 4.0) * logits);
        add_mem(c, F, M, 8.0 * logits);
        add_mem(c, F, M, 8.0 * logits);
        add_mem(c, B, M, (8.0 + EL) * logits);
        if (c->t > 1)
            tp = ppsim_coll_allreduce_s(&c->tp_link, 4.0 * c->T, c->t) +
                 ppsim_coll_allreduce_s(&c->tp_link, 8.0 * c->T, c->t);
        break;
    default:
        /* Megatron's unfused vocab-parallel cross-entropy, one eager kernel per line
         * ([MEG-CE]): the fp32 copy, max, subtract the max in place, exp in place, sum,
         * divide by the sum in place (the softmax kept for the backward) */
        add_mem(c, F, M, (EL + 4.0) * logits);
        add_mem(c, F, M, 4.0 * logits);
        add_mem(c, F, M, 8.0 * logits);
        add_mem(c, F, M, 8.0 * logits);
        add_mem(c, F, M, 4.0 * logits);
        add_mem(c, F, M, 8.0 * logits);
        /* backward: softmax times the loss gradient in place, then the fp32 gradient cast
         * back to the bf16 logits ([MEG-CE]) */
        add_mem(c, B, M, 8.0 * logits);
        add_mem(c, B, M, (4.0 + EL) * logits);
        if (c->t > 1) /* the vocabulary-parallel max, sum and target logit, T floats each */
            tp = 3.0 * ppsim_coll_allreduce_s(&c->tp_link, 4.0 * c->T, c->t);
        break;
    }
    return tp;
}

void
ppsim_kernels_fill_stage(PpsimStageCost *st, const PpsimScenario *sc)
{
    ppsim_kernels_fill_stage_scaling(st, sc, TRUE);
}

void
ppsim_kernels_fill_stage_scaling(PpsimStageCost *st, const PpsimScenario *sc, gboolean fp8_scaling)
{
    Ctx c;
    ctx_init(&c, sc, fp8_scaling);
    const PpsimModel *m = &sc->model;
    const PpsimParallel *par = &sc->parallel;
    /* the stage's layers summed: dense ones and MoE ones (moe_mlp) */
    int blocks = ppsim_cost_stage_blocks(st); /* with the MTP depths' layers */
    int n_moe = ppsim_moe_layers_in(m, st->first_layer, blocks);
    /* each kind of layer once: dense or MoE (the MoE ones last), attending to the whole
     * sequence or through the sliding window */
    int moe_from = st->first_layer + blocks - n_moe;
    int n_win[2] = {ppsim_model_window_layers_in(m, st->first_layer, blocks - n_moe),
                    ppsim_model_window_layers_in(m, moe_from, n_moe)};
    int n_kind[2] = {blocks - n_moe, n_moe};
    LayerTimes lt = {0}, one, moe_avg = {0};
    st->pair_layers = 0;
    for (int moe = 0; moe < 2; moe++) {
        for (int win = 0; win < 2; win++) {
            int n = win ? n_win[moe] : n_kind[moe] - n_win[moe];
            if (n == 0)
                continue;
            c.windowed = win;
            layer_times(&c, moe, &one);
            layer_times_add(&lt, &one, n);
            if (moe)
                layer_times_add(&moe_avg, &one, (double)n / n_moe);
        }
    }
    c.windowed = FALSE;
    if (n_moe > 0)
        pair_parts(st, &moe_avg, n_moe);
    Pass F = lt.f, B = lt.b, W = lt.w;
    double tp_f = lt.tp_f, tp_b = lt.tp_b;
    double cp_f = lt.cp_f, cp_b = lt.cp_b;
    double ar_act = c.t > 1 ? (c.sp ? ppsim_coll_reduce_scatter_s(&c.tp_link, EL * c.T * c.h, c.t)
                                    : ppsim_coll_allreduce_s(&c.tp_link, EL * c.T * c.h, c.t))
                            : 0.0;
    int M = PPSIM_KERN_MEMORY;
    if (c.fp8 && blocks > 0) { /* the chunk's amax / scale updates, forward and backward */
        PpsimFp8Kernels k8;
        fp8_kernels(&c, TRUE, &k8);
        for (int i = 0; i < 2; i++) {
            add_mem(&c, &F, M, k8.update_f[i]);
            add_mem(&c, &B, M, k8.update_b[i]);
        }
        if (!c.fp8_cs && !c.fp8_bw) { /* delayed scaling's amax reduction: 4 bytes an amax */
            tp_f += amax_reduce(&c, k8.update_f[0] / 2.0);
            tp_b += amax_reduce(&c, k8.update_b[0] / 2.0);
        }
    }
    if (st->has_embedding) {
        embedding_kernels(&c, &F, &B);
        tp_f += ar_act;
    }
    /* the head, then each MTP depth's (mtp.h): the tokens ahead embedded, enorm and hnorm,
     * their concatenation projected by eh_proj (2h -> h, column-parallel: its input gathered
     * over the sequence, its output over the TP group; in B the input gradient
     * reduce-scattered, the output's sequence split gathered back), the layer (with the
     * stage's layers above), then the final norm, the shared head and a loss again */
    for (int k = 0; st->has_head && k <= st->mtp; k++) {
        if (k > 0) {
            embedding_kernels(&c, &F, &B);
            norm_kernels(&c, &F, &B);
            norm_kernels(&c, &F, &B);
            add_mem(&c, &F, M, 2.0 * EL * c.Tn * 2.0 * c.h); /* torch.cat */
            add_linear(&c, &F, &B, &W, c.T, c.h / c.t, 2.0 * c.h);
            tp_f += ar_act;
            if (c.t > 1) {
                double in = EL * c.T * 2.0 * c.h, out = EL * c.T * c.h;
                tp_f += ppsim_coll_allgather_s(&c.tp_link, out, c.t) +
                        (c.sp ? ppsim_coll_allgather_s(&c.tp_link, in, c.t) : 0.0);
                tp_b += c.sp ? ppsim_coll_reduce_scatter_s(&c.tp_link, in, c.t) +
                                   ppsim_coll_allgather_s(&c.tp_link, out, c.t)
                             : ppsim_coll_allreduce_s(&c.tp_link, in, c.t);
            }
        }
        norm_kernels(&c, &F, &B); /* final norm */
        add_gemm(&c, &F, &B, &W, c.T, c.V / c.t, c.h);
        tp_f += loss_kernels(&c, m->cross_entropy, &F, &B);
        /* the head is column-parallel: asynchronous, its input gradient goes beside its wgrad */
        tp_b += sc->parallel.tp_async_backward
                    ? MAX(0.0, ar_act - ppsim_gemm_seconds(&c.gpu, c.h, c.V / c.t, c.T, 1))
                    : ar_act;
    }
    double f_s = pass_total(&F) + tp_f + cp_f;
    double b_s = pass_total(&B) + tp_b + cp_b;
    double w_s = pass_total(&W);
    /* what the stage's recompute mode re-runs inside each B */
    Pass Bk = B;
    if (m->recompute == PPSIM_RECOMPUTE_FULL) { /* the layers' forward, collectives too */
        b_s += pass_total(&lt.f) + lt.tp_f + lt.cp_f;
        pass_scale_add(&Bk, &lt.f, 1.0);
    } else if (m->recompute == PPSIM_RECOMPUTE_SELECTIVE && !m->flash_attention) {
        b_s += pass_total(&lt.attn_f);
        pass_scale_add(&Bk, &lt.attn_f, 1.0);
    } else if (m->recompute == PPSIM_RECOMPUTE_LIGHT) {
        /* norms, activation and dropout re-run: their forward bytes again */
        Pass light = lt.f;
        light.k[PPSIM_KERN_GEMM] = light.k[PPSIM_KERN_ATTENTION] = 0;
        b_s += pass_total(&light);
        pass_scale_add(&Bk, &light, 1.0);
    } else if (m->recompute == PPSIM_RECOMPUTE_MOE) {
        /* each MoE layer's MLP block again (its all-to-alls: moe.c) */
        b_s += pass_total(&lt.moe_f) + lt.moe_tp_f;
        pass_scale_add(&Bk, &lt.moe_f, 1.0);
    } else if (m->recompute == PPSIM_RECOMPUTE_MLA_UP) {
        /* MLA's up-projections and rotary again, with the latents' all-gather */
        b_s += pass_total(&lt.mla_up_f) + lt.mla_up_tp;
        pass_scale_add(&Bk, &lt.mla_up_f, 1.0);
    }
    st->est.f_ps = ps(f_s) + st->zero_gather_ps;
    st->est.b_ps = ps(b_s) + st->zero_gather_ps;
    st->est.w_ps = ps(w_s);
    st->est.r_ps = ps(f_s);
    st->tp_comm_f_ps = ps(tp_f);
    st->tp_comm_b_ps = ps(tp_b + (m->recompute == PPSIM_RECOMPUTE_FULL     ? lt.tp_f
                                  : m->recompute == PPSIM_RECOMPUTE_MOE    ? lt.moe_tp_f
                                  : m->recompute == PPSIM_RECOMPUTE_MLA_UP ? lt.mla_up_tp
                                                                           : 0));
    for (int k = 0; k < PPSIM_KERN_N; k++) {
        st->kern_f_ps[k] = ps(F.k[k]);
        st->kern_b_ps[k] = ps(Bk.k[k]);
        st->kern_w_ps[k] = ps(W.k[k]);
    }
    st->opt_ps = ppsim_kernels_optimizer_ps(st, sc);
    int dp = par->present ? par->dp : 1;
    /* DP gradient reduction over dp x cp ranks (ZeRO-3 keeps the closed-form ring) */
    int group = dp * c.cp;
    if (par->present && group > 1 && par->zero < 3) {
        const PpsimHardware *hw = &sc->hardware;
        int stride = ppsim_par_dp_stride(sc) / c.cp; /* cp ranks sit inside the device */
        int local = ppsim_par_group_per_node(hw, group, stride);
        /* the gradients in parallel.grad_reduce_dtype; with ZeRO 1-2 the weights' all-gather
         * (bf16, or FP8 weights in FP8) is the ring's second half (with
         * overlap_param_gather it waits for the next iteration) */
        double gb = ppsim_par_grad_reduce_bytes(sc) * st->params;
        double wb = ppsim_par_weight_gather_bytes(st, sc);
        double red_g = hier_allreduce_s(hw, gb, group, local);
        double rs = red_g, ag = 0.0;
        if (par->zero > 0) { /* grad_sync: all_reduce keeps the gradients' whole ring */
            rs = par->grad_sync == PPSIM_GRAD_SYNC_ALL_REDUCE ? red_g : red_g / 2;
            ag = (wb == gb ? red_g : hier_allreduce_s(hw, wb, group, local)) / 2;
        }
        gboolean apart = ppsim_scenario_overlaps_param_gather(sc);
        double red = apart ? rs : rs + ag;
        double exposed = par->overlap_grad_reduce ? bucket_exposed(red, b_s + w_s, blocks) : red;
        /* the replay moves these bytes over the links: what the link's line rate carries in
         * the exposed time */
        gboolean across = ppsim_par_dp_across_nodes(sc);
        double line = across ? hw->network_bytes_per_s : hw->nvlink_bytes_per_s;
        ppsim_par_set_dp_halves(st, sc, ps(exposed), apart ? ps(ag) : 0, exposed * line,
                                apart ? ag * line : 0.0);
    } else if (par->present && group > 1 && par->overlap_grad_reduce && blocks > 0 &&
               st->dp_comm_ps > 0) {
        /* ZeRO-3 (the closed-form ring reduce-scatter of parallel.c): FSDP reduce-scatters
         * each layer's gradients as its backward ends, so the same buckets hide behind the
         * last backward */
        double red = (double)st->dp_comm_ps / PPSIM_PS_PER_S;
        double exposed = bucket_exposed(red, b_s + w_s, blocks);
        st->dp_bytes = (guint64)ppsim_round_clamped((double)st->dp_bytes * exposed / red);
        st->dp_comm_ps = ps(exposed);
    }
}
