/* scenario.h: a scenario file as plain typed data (scenarios/README.md).
 *
 * Parsing turns YAML bytes into this struct (scenario-parse.c, pure); loading reads files
 * (scenario-load.c). Every quantity is already in base units: bytes, bytes/s, picoseconds,
 * FLOP/s. Defaults and key tables live in scenario-schema.c only.
 */
#pragma once

#include <glib.h>
#include "util/units.h"

G_BEGIN_DECLS

typedef enum {
    PPSIM_RECOMPUTE_NONE,
    PPSIM_RECOMPUTE_SELECTIVE, /* attention core recomputed: [KOR] Table 2 */
    PPSIM_RECOMPUTE_FULL,      /* only layer inputs kept: [KOR] Table 2, 2sbh per layer */
    PPSIM_RECOMPUTE_LIGHT,     /* LayerNorm, GeLU, dropout re-run: [PO] App. C, 20sbh per layer */
    PPSIM_RECOMPUTE_MOE,       /* each MoE layer's MLP block re-run whole in B, its input kept
                                * (Megatron-Core --recompute-modules moe); dense parts as none */
    PPSIM_RECOMPUTE_MLA_UP,    /* MLA's up-projections and rotary re-run in B, Q, K, V not kept
                                * (Megatron-Core --recompute-modules mla_up_proj, [DSV3] §3.2.3) */
} PpsimRecompute;

/* The modes' names as model.recompute spells them, in enum order, NULL-terminated. */
extern const char *const ppsim_recompute_names[];

/* "none", "selective", "full", "light", "moe", "mla_up_proj"; "?" out of range. */
const char *ppsim_recompute_name(PpsimRecompute r);

/* The mark `ppsim plan` and `ppsim search` print after a stage's layer count: "" for none,
 * else the mode's initial (s, f, l, m). */
const char *ppsim_recompute_mark(PpsimRecompute r);

/* Where a value came from, for error messages: 1-based line and column; 0 when unknown
 * (a default). */
typedef struct {
    int line;
    int col;
} PpsimMark;

typedef struct {
    char *preset; /* preset name, owned; NULL when none */
    int nodes;
    int gpus_per_node;

    guint64 gpu_memory_bytes;
    double gpu_peak_flops; /* dense 16-bit FLOP/s */
    double gpu_efficiency; /* achieved / peak, in (0, 1]; 0 = unset: the kernel model
                            * (cost/kernels.h) times each op; set, every op is FLOPs /
                            * (peak x efficiency) */
    /* The kernel model's GPU (cost/gemm.h; presets cite each number) */
    int gpu_sms;                     /* streaming multiprocessors */
    double gpu_hbm_bytes_per_s;      /* HBM bandwidth */
    double gpu_peak_flops_fp8;       /* dense FP8 tensor FLOP/s (listed; ops run in 16 bits) */
    double gpu_gemm_efficiency;      /* large-GEMM achieved / peak */
    double gpu_gemm_efficiency_fp8;  /* the same for FP8 GEMMs */
    double gpu_attention_efficiency; /* FlashAttention kernels achieved / peak: the kernel
                                      * model.attention_kernel default runs */
    /* the same for each kernel model.attention_kernel may name; 0: not known for this GPU,
     * and naming that kernel is an error */
    double gpu_attention_efficiency_cudnn; /* cuDNN's fused attention */
    double gpu_attention_efficiency_fa1;   /* first-generation FlashAttention (no Hopper path) */
    /* ... its backward's, when set (0: the figure above for both passes) */
    double gpu_attention_efficiency_fa1_backward;
    double gpu_attention_efficiency_fa2; /* FlashAttention-2 */
    double gpu_attention_efficiency_fa3; /* FlashAttention-3 (Hopper) */
    double gpu_memory_efficiency;        /* streaming kernels achieved / HBM bandwidth */
    int gpu_tile_m, gpu_tile_n;          /* output tile of a large GEMM kernel */
    /* a GEMM tile's fixed cost in elements of K: a GEMM of inner dimension K runs at
     * K / (K + this) of its rate (0: none) */
    double gpu_gemm_k_overhead;
    PpsimTime gpu_launch_ps; /* per kernel */
    int copy_streams;        /* 1: one shared D2H/H2D stream ([PO] 4.2); 2: one per direction */

    double nvlink_bytes_per_s; /* per direction, per GPU */
    PpsimTime nvlink_latency_ps;
    double nvlink_bus_efficiency; /* NCCL busbw / line rate on NVLink (collectives) */

    double pcie_bytes_per_s;        /* GPU <-> switch, per direction */
    double pcie_uplink_bytes_per_s; /* switch <-> host, per direction */
    PpsimTime pcie_latency_ps;
    int pcie_gpus_per_switch;
    double pcie_shared_efficiency; /* share of an uplink direction delivered while flows of
                                    * two or more GPUs cross it (1 = ideal fair sharing;
                                    * 0 = unset, read as 1) */

    double network_bytes_per_s; /* per GPU NIC, per direction (inter-node) */
    PpsimTime network_latency_ps;
    double network_bus_efficiency; /* NCCL busbw / line rate across nodes */

    guint64 host_memory_bytes;     /* per node */
    int host_optimizer_workers;    /* CPU optimizer workers per node */
    double host_adam_params_per_s; /* per worker */
} PpsimHardware;

typedef enum {
    PPSIM_MLP_GELU,   /* two matrices h x f, biases, LayerNorm, learned positions: GPT */
    PPSIM_MLP_SWIGLU, /* three matrices h x f, no biases, RMSNorm, rotary positions: Llama */
} PpsimMlp;

/* Where the ranks of a 3D-parallel job sit: the order in which tp, pp and dp vary along
 * the GPU numbering, innermost first. The default, tp-pp-dp, keeps a replica's pipeline
 * stages adjacent; Megatron-LM numbers its ranks tp-dp-pp ([MEG] `parallel_state.py`,
 * order "tp-cp-ep-dp-pp"; the 2021 `mpu/initialize.py` alike). */
typedef enum {
    PPSIM_PLACEMENT_TP_PP_DP,
    PPSIM_PLACEMENT_TP_DP_PP,
} PpsimPlacement;

/* How a pipeline send and its receive meet (parallel.p2p, hardware mode). */
typedef enum {
    PPSIM_P2P_ASYNC,      /* the sender goes on; only the receiver waits for the data */
    PPSIM_P2P_BLOCKING,   /* the send starts once the receiver posted its receive, and the
                           * sender's next op waits until it is done */
    PPSIM_P2P_OVERLAPPED, /* as blocking, but the receive is posted after the receiver's
                           * previous op of the same direction (forward, backward) and the
                           * sender's next op of that direction waits */
} PpsimP2p;

/* parallel.grad_reduce_dtype: the dtype the DP gradient reduction moves */
typedef enum {
    PPSIM_GRAD_REDUCE_BF16, /* 2 bytes (default): Apex's grad_sync_dtype bf16, NeMo 2 and
                             * Megatron-Bridge performance recipes, 16-bit DeepSpeed */
    PPSIM_GRAD_REDUCE_FP32, /* 4 bytes: Megatron-Core with --bf16, PyTorch FSDP2's default */
} PpsimGradReduce;

/* parallel.grad_sync: how ZeRO 1-2 reduce the gradients before each rank steps its shard */
typedef enum {
    PPSIM_GRAD_SYNC_REDUCE_SCATTER, /* each rank receives its shard's sum (default: Megatron's
                                     * distributed optimizer, DeepSpeed ZeRO's reduce_scatter) */
    PPSIM_GRAD_SYNC_ALL_REDUCE,     /* every rank receives the whole sum (DeepSpeed's
                                     * BF16_Optimizer under its pipeline engine) */
} PpsimGradSync;

/* parallel.zero3_layout: how ZeRO-3 holds a unit's gathered weights and reduces its
 * gradients */
typedef enum {
    PPSIM_ZERO3_FLAT,      /* one flat buffer a unit that the weights are views of (FSDP1's
                            * FlatParameter): the collectives read and write it in place */
    PPSIM_ZERO3_PER_PARAM, /* PyTorch FSDP2's per-parameter sharding: each all-gather copied
                            * out into every parameter, each gradient copied into the
                            * reduce-scatter's buffer (in its reduce dtype) */
} PpsimZero3Layout;

/* How an MoE layer's tokens reach their experts across nodes (parallel.ep_dispatch). */
typedef enum {
    PPSIM_EP_DISPATCH_ALLTOALL, /* NCCL's all-to-all: every routed copy to its expert's GPU */
    PPSIM_EP_DISPATCH_DEEPEP,   /* DeepEP / HybridEP: one copy a token crosses the network to
                                 * each node its experts sit on, then NVLink to the GPUs;
                                 * the combine reduces on that node before the network hop */
} PpsimEpDispatch;

typedef struct {
    gboolean present;           /* a `parallel:` section was written (beyond p2p) */
    int tp;                     /* tensor-parallel group size (one pipeline device) */
    int pp;                     /* parallel.pp as written; 0 when unset (training.pp holds p) */
    int dp;                     /* data-parallel replicas */
    gboolean sequence_parallel; /* [KOR] §4.2.2 */
    int zero;                   /* ZeRO stage 0..3, [ZERO] §5 */
    PpsimPlacement placement;
    int ep;  /* expert parallelism: the routed experts of a layer spread over ep GPUs of the
              * same pipeline stage (out of its tp x cp x dp) */
    int etp; /* expert tensor parallelism: each routed expert split over etp GPUs (divides
              * tp; defaults to tp, or to the largest that fits when ep x tp exceeds the
              * stage's GPUs); ep x etp divides tp x cp x dp */
    double tp_efficiency;         /* GEMM efficiency kept when split tp ways, in (0, 1]: only with
                                   * hardware.gpu.efficiency (the kernel model has GEMM shapes) */
    int cp;                       /* context-parallel group size: ring attention over s/cp tokens */
    gboolean tp_comm_overlap;     /* TP collectives overlapped with the GEMMs beside them */
    gboolean tp_async_backward;   /* the backward's column-parallel TP collectives run beside
                                   * their dgrad / wgrad GEMMs (Megatron-LM since 2021-09, TE) */
    gboolean overlap_grad_reduce; /* DP reduction in buckets during the backward */
    /* ZeRO 1-2: the updated weights' all-gather before the next iteration's forwards */
    gboolean overlap_param_gather;
    PpsimGradReduce grad_reduce_dtype; /* the gradients' reduction: bf16 (default) or fp32 */
    PpsimZero3Layout zero3_layout;     /* ZeRO-3's buffers: flat (default) or per_param */
    PpsimGradSync grad_sync;           /* ZeRO 1-2: reduce_scatter (default) or all_reduce */
    PpsimP2p p2p;                      /* pipeline sends: async (default), blocking, overlapped */
    PpsimEpDispatch ep_dispatch;       /* MoE all-to-alls: alltoall (default) or deepep */
    gboolean ep_fp8_dispatch; /* deepep: the dispatch-direction all-to-alls (F's dispatch, B's
                               * combine gradient) carry FP8 values and their scales */
    int ep_comm_sms;          /* SMs the MoE all-to-alls hold while an F&B pair runs compute
                               * beside them; -1 (unwritten): by dispatch (moe.h) */
} PpsimParallel;

/* Mixture of experts (model.moe; src/cost/moe.h): every layer from dense_layers on has
 * experts routed FFNs of width expert_ffn_hidden instead of the dense FFN, each token going
 * to top_k of them, plus shared_experts FFNs every token passes. experts = 0: dense. */
typedef struct {
    int experts;
    int top_k;
    int expert_ffn_hidden;
    int shared_experts;
    int dense_layers;       /* the first layers keep the dense FFN (ffn_hidden) */
    double capacity_factor; /* > 0: each expert computes capacity_factor x its fair share of
                             * slots (padded; tokens beyond are dropped); 0: dropless */
    double imbalance;       /* >= 1: the busiest EP rank's routed tokens over the mean */
    int groups;             /* group-limited routing: the experts in this many equal groups,
                             * a token's top_k from its group_top_k best (0: no limit) */
    int group_top_k;
} PpsimMoe;

/* Multi-head latent attention (model.mla; [DSV2] §2.1, [DSV3] §2.1.1), as Megatron-Core's
 * MLASelfAttention builds it: the hidden state is projected down to a query latent of
 * q_lora_rank (0: none, the queries projected from the hidden state directly) and a KV latent
 * of kv_lora_rank plus one shared rotary key of qk_rope_head_dim; each latent is normed and
 * projected up to the heads' queries (qk_nope_head_dim + qk_rope_head_dim wide), keys (the
 * same, the rotary part shared) and values (v_head_dim wide). kv_lora_rank = 0: the model's
 * own multi-head or grouped-query attention. */
typedef struct {
    int q_lora_rank;
    int kv_lora_rank;
    int qk_nope_head_dim;
    int qk_rope_head_dim;
    int v_head_dim;
} PpsimMla;

/* The loss's kernels (model.cross_entropy), as Megatron-Core runs the vocabulary-parallel
 * cross-entropy: unfused (eager PyTorch kernels, Megatron's default), native
 * (cross_entropy_loss_fusion with cross_entropy_fusion_impl native: the same steps in three
 * torch.compile'd kernels forward and one backward) or te (cross_entropy_fusion_impl te:
 * Transformer Engine's two Triton kernels, which write the gradient into the bf16 logits during
 * the forward). */
typedef enum {
    PPSIM_CE_UNFUSED,
    PPSIM_CE_NATIVE,
    PPSIM_CE_TE,
} PpsimCrossEntropy;

/* The attention core's kernel (model.attention_kernel): default, the one Megatron-Core's
 * Transformer Engine picks on the GPU (cuDNN's fused attention on Hopper, FlashAttention-2
 * on Ampere), or a named one, each timed at its own hardware.gpu.attention_efficiency_*. */
typedef enum {
    PPSIM_ATTN_DEFAULT,
    PPSIM_ATTN_CUDNN,
    PPSIM_ATTN_FA1,
    PPSIM_ATTN_FA2,
    PPSIM_ATTN_FA3,
} PpsimAttentionKernel;

/* How the layer's elementwise operations run (model.elementwise): fused, one pass each, as
 * Megatron-Core and torch.compile run them; or eager, as PyTorch's reference Llama code
 * (TorchTitan's) runs them without torch.compile: an fp32 RMSNorm of eight kernels, rotary
 * through fp32 complex tensors, K and V repeated to every head, SiLU and its product apart. */
typedef enum {
    PPSIM_ELEMENTWISE_FUSED,
    PPSIM_ELEMENTWISE_EAGER,
} PpsimElementwise;

/* A layer property the `mlp` family decides unless the scenario writes it (model.dropout,
 * model.rotary): 0, the zero of a fresh PpsimModel, is the family's default. */
typedef enum {
    PPSIM_MODEL_FLAG_DEFAULT,
    PPSIM_MODEL_FLAG_TRUE,
    PPSIM_MODEL_FLAG_FALSE,
} PpsimModelFlag;

typedef struct {
    char *preset; /* model preset name, owned; NULL when none */
    PpsimMlp mlp;
    int layers;
    int hidden;
    int ffn_hidden; /* default 4 * hidden */
    int heads;
    int kv_heads; /* default heads */
    int head_dim; /* 0: hidden / heads (ppsim_model_q_width) */
    int seq_len;
    int vocab;
    gboolean flash_attention; /* default TRUE: the s^2 attention scores are not stored */
    gboolean causal;          /* default TRUE: FlashAttention skips the masked half */
    int sliding_window;       /* model.sliding_window: a windowed layer's query attends to
                               * itself and the sliding_window - 1 tokens before it (0:
                               * every layer attends to the whole sequence) */
    int full_attention_every; /* model.full_attention_every: with a window, the layers whose
                               * 1-based number is a multiple of it attend to the whole
                               * sequence (0: no layer does) */
    int cross_entropy;        /* PpsimCrossEntropy, default unfused */
    int attention_kernel;     /* PpsimAttentionKernel, default the GPU's */
    int elementwise;          /* PpsimElementwise, default fused */
    int dropout;              /* PpsimModelFlag, model.dropout (ppsim_model_dropout) */
    int rotary;               /* PpsimModelFlag, model.rotary (ppsim_model_rotary) */
    gboolean tied_embeddings; /* the LM head is the input embedding's matrix (default FALSE):
                               * one copy when one stage holds both, else its gradient
                               * all-reduced between the first and the last stage */
    int mtp_layers;           /* multi-token prediction depths ([DSV3] §2.2), each a layer, a
                               * projection and a second head and loss on the last stage
                               * (default 0) */
    PpsimRecompute recompute;
    GArray *stage_layers; /* (nullable) int per stage: explicit layer split */
    PpsimMark stage_layers_mark;
    GArray *stage_recompute;        /* (nullable) PpsimRecompute (as int) per stage: overrides
                                     * `recompute` stage by stage (the planner writes it) */
    GArray *stage_recompute_layers; /* (nullable) int per stage, with stage_recompute: how
                                     * many of the stage's layers take its mode ({full: 3}),
                                     * the rest `recompute`; -1: all of them */
    PpsimMark stage_recompute_mark;
    PpsimMoe moe;
    PpsimMla mla;
} PpsimModel;

/* Precision of the transformer layers' linear GEMMs: FP8 runs them at the FP8 peak with
 * 1-byte operands (Transformer Engine style); attention, the LM head and every other kernel
 * stay 16-bit. */
typedef enum {
    PPSIM_DTYPE_BF16,
    PPSIM_DTYPE_FP8,
} PpsimDtype;

/* How FP8 tensors get their scale (training.fp8_recipe, with training.dtype: fp8):
 * Transformer Engine's delayed scaling (from an amax history of earlier steps, fused into the
 * cast), current scaling (TE 2.x's Float8CurrentScaling: each tensor's own amax, found by
 * a pass over it before the cast) or block scaling (TE 2.x's Float8BlockScaling, DeepSeek-V3's
 * recipe: a scale for each 1 x 128 block of activations and gradients and each 128 x 128
 * block of weights, found by the cast kernel itself). */
typedef enum {
    PPSIM_FP8_DELAYED,
    PPSIM_FP8_CURRENT,
    PPSIM_FP8_BLOCKWISE,
} PpsimFp8Recipe;

/* Hardware-mode memory the model counts outside weights, gradients, optimizer states and
 * activations (src/README.md "How memory is modelled"). memory.reserved: the CUDA context and
 * kernel images, 781 MiB measured for a minimal PyTorch process ([PT34323]), plus cuBLAS's
 * 8.125 MiB default workspace ([PTF178671]) and cuBLASLt's 32 MiB on Hopper ([PT120925]):
 * 821 MiB. memory.fragmentation: fitted on [TP] Fig. 8(b) and [ZB] Table 4, src/README.md "How
 * memory is modelled". */
#define PPSIM_MEMORY_RESERVED_DEFAULT ((guint64)821 << 20)
#define PPSIM_MEMORY_FRAGMENTATION_DEFAULT 0.02

/* Precision of the gradients the backward accumulates into: Megatron keeps fp32 "main
 * gradients" with bf16 weights (4 bytes per parameter, [MEGDO]); bf16 halves them. */
typedef enum {
    PPSIM_MAIN_GRADS_FP32,
    PPSIM_MAIN_GRADS_BF16,
} PpsimMainGrads;

/* training.grad_accumulation: how each microbatch's weight gradients join the gradients
 * accumulated over the step (kernel model: a memory-bound pass over the stage's parameters in
 * its W, src/cost/kernels.h). */
typedef enum {
    PPSIM_GRAD_ACCUM_FUSED,    /* the wgrad GEMMs accumulate into the main gradients (default:
                                * Megatron's gradient_accumulation_fusion, Transformer Engine) */
    PPSIM_GRAD_ACCUM_AUTOGRAD, /* PyTorch adds each gradient into the 16-bit .grad in place,
                                * from the second microbatch on */
    PPSIM_GRAD_ACCUM_ADD,      /* the 16-bit .grad added into main_grads' buffer after each
                                * microbatch (Megatron's DDP hook without the fusion) */
    PPSIM_GRAD_ACCUM_CAST_ADD, /* cast to an fp32 temporary, then added into fp32 gradients
                                * (DeepSpeed's BF16_Optimizer under its pipeline engine) */
} PpsimGradAccum;

/* How the optimizer step's elementwise work runs (training.optimizer, kernel model). */
typedef enum {
    PPSIM_OPTIMIZER_FUSED, /* one fused Adam kernel (Apex, Megatron, Transformer Engine) */
    PPSIM_OPTIMIZER_EAGER, /* PyTorch ops, one pass each (Composer's DecoupledAdamW) */
} PpsimOptimizer;

typedef struct {
    int pp;              /* p */
    int chunks;          /* v */
    gboolean chunks_set; /* training.chunks written (else the default 1) */
    int microbatches;    /* m */
    int microbatch_size;
    int global_batch;             /* sequences per iteration over all replicas; 0 = unset */
    double bytes_per_param;       /* weights+grads+optimizer states: 2 + grads + 12 (fp32 master
                                   * weights and Adam's two moments, [ZERO] 3.1) unless written */
    gboolean bytes_per_param_set; /* training.bytes_per_param written */
    PpsimMainGrads main_grads;    /* default fp32, as Megatron-LM with bf16 ([MEGDO]) */
    int grad_accumulation;        /* PpsimGradAccum; default fused */
    int optimizer;                /* PpsimOptimizer; default fused */
    int dtype;                    /* PpsimDtype of the linear layers' GEMMs (kernel model) */
    int fp8_recipe;               /* PpsimFp8Recipe (dtype fp8 only) */
    gboolean fp8_weights;         /* training.fp8_weights: the weights stored in FP8 (dtype fp8
                                   * only); else Transformer Engine caches FP8 copies */
} PpsimTraining;

/* One generator option as written, validated later against the generator's table. */
typedef struct {
    char *key;
    char *value;
    PpsimMark mark; /* of the value */
} PpsimOptionValue;

typedef struct {
    char *name;      /* generator name, or "custom" */
    char *file;      /* custom: schedule CSV path, resolved against the scenario's folder */
    char *label;     /* display name (default: name, or name + options) */
    PpsimMark mark;  /* of the name */
    char *origin;    /* (nullable) where it was written when not in the scenario file, e.g.
                      * "--schedule": errors then name it instead of the file */
    GArray *options; /* PpsimOptionValue, in file order (excluding name, file, label) */
} PpsimScheduleSpec;

typedef struct {
    gboolean present;
    PpsimTime forward_ps;
    PpsimTime backward_input_ps;
    PpsimTime backward_weight_ps;
    PpsimTime p2p_ps;
    PpsimTime offload_ps;          /* one-way D2H (= H2D) time of one stage's activation */
    PpsimTime recompute_ps;        /* R; default = forward */
    PpsimTime optimizer_ps;        /* OPT on the GPU; default 0 */
    PpsimTime forward_backward_ps; /* an F&B pair ([DUALPIPE] "F&B"): an F and a full
                                    * backward overlapped; 0 = unset (F + B + W) */
    double activation;             /* memory units allocated by F */
    double weight_activation;      /* of which held after B until W */
    /* Optional per-stage overrides (nullable GArray of double, ms / units, length S). */
    GArray *stage_forward, *stage_backward_input, *stage_backward_weight, *stage_activation;
    PpsimMark mark;
} PpsimCostsSpec;

/* Kinds of op noise of `variability:` (scenario-variability.c), each with its own cv. */
typedef enum {
    PPSIM_NOISE_FORWARD,   /* F */
    PPSIM_NOISE_BACKWARD,  /* B, and BW */
    PPSIM_NOISE_WEIGHT,    /* W */
    PPSIM_NOISE_RECOMPUTE, /* R */
    PPSIM_NOISE_OPTIMIZER, /* OPT */
    PPSIM_NOISE_OFFLOAD,   /* OFF, RL, GOFF, WRL (copy-engine transfers) */
    PPSIM_NOISE_COMM,      /* cross-device transfers and DP gradient reductions */
    PPSIM_NOISE_N_KINDS
} PpsimNoiseKind;

/* One persistent slowdown: a device (`devices:`) or the link between two devices
 * (`links: {"A-B": factor}`, b = -1 for a device). */
typedef struct {
    int a, b;
    double factor;
    char *where; /* "file:line:col" (or "--set key") of the entry, for messages; owned */
} PpsimSlowdown;

/* A transient slowdown window of `events:`: the device's compute runs @factor times slower
 * from @from_ps to @to_ps. */
typedef struct {
    int device;
    PpsimTime from_ps, to_ps;
    double factor;
    char *where; /* as PpsimSlowdown's */
} PpsimSlowEvent;

/* `variability:` (scenarios/README.md "Variability"): per-op lognormal noise and slowdowns, applied
 * by `ppsim run --samples N`. */
typedef struct {
    gboolean present;
    double cv;                           /* every kind's default */
    double cv_kind[PPSIM_NOISE_N_KINDS]; /* -1: cv */
    GArray *devices;                     /* (nullable) PpsimSlowdown */
    GArray *links;                       /* (nullable) PpsimSlowdown */
    GArray *events;                      /* (nullable) PpsimSlowEvent */
    int dp_exact;                        /* DP replicas sampled exactly per sample (default 64) */
} PpsimVariability;

/* The cv of op-noise kind @kind. */
double ppsim_variability_cv(const PpsimVariability *v, PpsimNoiseKind kind);
/* Frees @v's lists (the struct itself is embedded). */
void ppsim_variability_clear(PpsimVariability *v);

typedef struct {
    char *name;
    char *path;    /* file it was loaded from (display name), owned */
    char *basedir; /* folder for relative paths, owned */
    PpsimHardware hardware;
    gboolean has_hardware; /* hardware: written (or implied by a model) */
    PpsimModel model;
    gboolean has_model;
    PpsimTraining training;
    PpsimParallel parallel;
    GPtrArray *schedules;          /* PpsimScheduleSpec*, at least one */
    guint64 memory_limit_bytes;    /* hardware mode; default: GPU memory */
    double memory_limit_units;     /* explicit mode; 0 = none */
    gboolean memory_limit_set;     /* memory.limit written (and > 0 in explicit mode) */
    double memory_fragmentation;   /* hardware mode: the caching allocator's reserved-but-free
                                    * bytes at the peak, as a fraction of the allocated bytes */
    guint64 memory_reserved_bytes; /* hardware mode: per GPU, the CUDA context, kernel images
                                    * and library workspaces, outside the allocator */
    PpsimMark memory_reserved_mark;
    PpsimCostsSpec costs;
    PpsimVariability variability;
    int framework;           /* index in ppsim_framework_names; 0 none */
    guint framework_applied; /* bit i: the framework's setting i was applied (its key not
                              * written, its condition met) */
    GHashTable *where;       /* (nullable) dotted key path -> where it was written ("file:line:col"
                              * or "--set key"), for messages after loading; owned, shared by
                              * shallow copies */
} PpsimScenario;

/* Parses a scenario from YAML @bytes. @display_name prefixes errors ("a.yaml:3:7: ...") and
 * @basedir resolves relative schedule files. @overrides (nullable, NULL-terminated) are
 * "key.path=value" strings applied before validation, as if written in the file; an error in
 * one names "--set key.path". Pure: no file I/O.
 * Returns: (transfer full) (nullable). */
PpsimScenario *ppsim_scenario_parse(const char *bytes, gsize len, const char *display_name,
                                    const char *basedir, const char *const *overrides,
                                    GError **error);

/* The number at dotted key @path of @sc (e.g. "training.microbatches"), for sweep
 * constraints: integers and plain numbers as they are, sizes in bytes, bandwidths in
 * bytes/s, FLOP rates in FLOP/s, times in ms, booleans 0/1, `memory.limit` in bytes (units
 * in explicit mode), `model.recompute` as its enum index. FALSE when @path names no number. */
gboolean ppsim_scenario_lookup_number(const PpsimScenario *sc, const char *path, double *out);
/* Where key @path of @sc was written, for a message about its value: "file:line:col",
 * "--set key.path" when an override set it, else the scenario's file (the key came from a
 * default or a preset). Returns: (transfer full). */
char *ppsim_scenario_where(const PpsimScenario *sc, const char *path);
/* The same for a message about the value at @mark (a list entry, say): "--set key.path" when
 * an override set @path, else "file:line:col" of @mark. Returns: (transfer full). */
char *ppsim_scenario_where_mark(const PpsimScenario *sc, const char *path, PpsimMark mark);
/* The name parallel.p2p is written with ("async", "blocking", "overlapped"). */
const char *ppsim_p2p_name(PpsimP2p p2p);

/* Whether the model trains with dropout (hidden, attention and embedding dropout, each with
 * its mask): model.dropout, by default the GELU family's GPT-style yes and SwiGLU's Llama-style
 * no. */
gboolean ppsim_model_dropout(const PpsimModel *m);

/* Whether the model has rotary position embeddings (a rotary kernel on q and k, no learned
 * position table): model.rotary, by default SwiGLU's Llama-style yes and GELU's GPT-style
 * no. */
gboolean ppsim_model_rotary(const PpsimModel *m);

/* Of the @n transformer layers from index @first (0-based), how many attend through the
 * sliding window (model.sliding_window; none without one, or when it spans the sequence):
 * every layer but those whose 1-based number is a multiple of model.full_attention_every,
 * Megatron-Core's `window_attn_skip_freq` and Hugging Face's `layer_types` alike. Indices
 * past the model's layers (multi-token prediction's) follow the same rule. */
int ppsim_model_window_layers_in(const PpsimModel *m, int first, int n);

/* The widths of the attention's projections: heads x head_dim for the queries (and the
 * attention output's input), kv_heads x head_dim for each of K and V. model.head_dim
 * defaults to hidden / heads, which makes the first `hidden`; models such as Qwen3 or
 * Gemma set it wider or narrower. */
double ppsim_model_q_width(const PpsimModel *m);
double ppsim_model_kv_width(const PpsimModel *m);

/* How a linear layer of the attention block is split over a TP group: by its output columns
 * (QKV, MLA's up-projections), by its input rows (the output projection), or held whole by
 * every rank (MLA's down-projections: Megatron-Core's `parallel_mode="duplicated"`, each rank
 * projecting its own sequence-parallel tokens). */
typedef enum {
    PPSIM_ATTN_COLUMN,
    PPSIM_ATTN_ROW,
    PPSIM_ATTN_DUPLICATED,
} PpsimAttnSplit;

#define PPSIM_ATTN_LINEARS_MAX 5

/* The attention block of one layer, per token (element widths), whole (before TP):
 * - linear[]: its linear layers, out x in each: QKV and the output projection; with MLA the
 *   query down- and up-projection (or the query projection), the KV down- and up-projection,
 *   the output projection;
 * - qk, k, v: the queries, keys and values the attention core reads (heads x head width:
 *   with GQA k and v are kv_heads wide; with MLA the queries and keys are qk_nope_head_dim +
 *   qk_rope_head_dim a head, the values v_head_dim);
 * - out: the attention's output, the output projection's input (heads x the value head);
 * - latent: MLA's query and KV latents (q_lora_rank + kv_lora_rank), each normed; 0 without;
 * - rope_k: MLA's shared rotary key (qk_rope_head_dim); 0 without;
 * - gather: what sequence parallelism all-gathers a token before the column-split linears:
 *   the normed hidden state (h), with MLA the latents and the rotary key instead (the hidden
 *   state too when the queries are not compressed);
 * - params: the linears' weights plus MLA's latent norms (no biases: those are the MLP
 *   family's, ppsim_par_layer_params). */
typedef struct {
    int n_linear;
    struct {
        double out, in;
        PpsimAttnSplit split;
    } linear[PPSIM_ATTN_LINEARS_MAX];
    double qk, k, v, out, latent, rope_k, gather, params;
} PpsimAttnShape;

void ppsim_model_attn_shape(const PpsimModel *m, PpsimAttnShape *out);

/* Forward FLOPs of the attention block's linears, a token: 2 x their weights. */
double ppsim_model_attn_linear_flops(const PpsimModel *m);

/* MLA's up-projections' weights (the column-split linears: the query up-projection, or the
 * query projection, and the KV up-projection), what recompute mode mla_up_proj re-runs; 0
 * without model.mla. */
double ppsim_model_mla_up_params(const PpsimModel *m);

/* The name model.attention_kernel is written with ("default", "cudnn", "fa1", "fa2", "fa3"). */
const char *ppsim_attention_kernel_name(PpsimAttentionKernel k);

/* The efficiency @hw gives attention kernel @k (0: not known for this GPU) and, when @key is
 * not NULL, the key it is set with (hardware.gpu.attention_efficiency[_cudnn|_fa1|_fa2|_fa3]). */
double ppsim_attention_efficiency(const PpsimHardware *hw, PpsimAttentionKernel k,
                                  const char **key);
/* The efficiency of kernel @k's backward where @hw gives it one of its own
 * (hardware.gpu.attention_efficiency_fa1_backward), else 0: the forward's serves both. */
double ppsim_attention_backward_efficiency(const PpsimHardware *hw, PpsimAttentionKernel k);

/* As ppsim_scenario_parse, but only checks each value on its own (syntax, known keys,
 * types, units, ranges), not the rules that relate several keys: whether @overrides could
 * belong to some valid scenario, as a sweep axis value must. */
gboolean ppsim_scenario_check_values(const char *bytes, gsize len, const char *display_name,
                                     const char *basedir, const char *const *overrides,
                                     GError **error);

/* Reads and parses @path. Returns: (transfer full) (nullable). */
PpsimScenario *ppsim_scenario_load_file(const char *path, const char *const *overrides,
                                        GError **error);

/* A scenario with defaults only, for tests and `ppsim validate`: explicit-cost mode with
 * unit costs, the given shape and one schedule @schedule_name. Returns: (transfer full). */
PpsimScenario *ppsim_scenario_new_explicit(int pp, int chunks, int microbatches,
                                           const char *schedule_name);

/* Reads the YAML mapping at @path (a scenario fragment, e.g. what `ppsim plan -o` writes)
 * as "key.path=value" overrides, lists as "[a, b]", for ppsim_scenario_load_file: the
 * fragment then applies as if its keys were written in the scenario. Returns: (transfer
 * full) (nullable) a NULL-terminated string array. */
char **ppsim_scenario_fragment_overrides(const char *path, GError **error);

void ppsim_scenario_free(PpsimScenario *scenario);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PpsimScenario, ppsim_scenario_free)

/* Parses schedule specs written as in the scenario's `schedule` key (a name, a flow mapping
 * `{name: po-h, co_schedule: independent}`, or a list of these) from @text, e.g. a
 * command-line value; @origin names it in errors ("--schedule:1:8: ...") and in each spec's
 * `origin`. Relative `file`s resolve against @basedir (nullable). Returns: (transfer full)
 * (nullable) a GPtrArray of PpsimScheduleSpec*. */
GPtrArray *ppsim_schedule_specs_parse(const char *text, const char *origin, const char *basedir,
                                      GError **error);

PpsimScheduleSpec *ppsim_schedule_spec_new(const char *name);
void ppsim_schedule_spec_free(PpsimScheduleSpec *spec);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PpsimScheduleSpec, ppsim_schedule_spec_free)

/* Hardware presets (scenario-presets.c), each number with its source (README References). */
typedef struct {
    const char *name;
    const char *summary;
    PpsimHardware hw;
} PpsimPreset;

/* NULL-terminated list in a stable order. */
const PpsimPreset *const *ppsim_presets(void);
const PpsimPreset *ppsim_preset_lookup(const char *name);

/* Model presets (scenario-models.c): published shapes, each cited there. */
typedef struct {
    const char *name;
    const char *summary;
    PpsimModel model; /* preset field unset */
} PpsimModelPreset;

/* NULL-terminated list in a stable order. */
const PpsimModelPreset *const *ppsim_model_presets(void);
const PpsimModelPreset *ppsim_model_preset_lookup(const char *name);

/* Training frameworks (scenario-frameworks.c, scenario key `framework`): the settings a
 * framework's published performance runs share, applied to the keys a scenario leaves
 * unwritten. Each setting holds always or under a condition on the scenario's values. */
typedef enum {
    PPSIM_FW_ALWAYS,
    PPSIM_FW_TP,       /* parallel.tp > 1 */
    PPSIM_FW_SP,       /* parallel.tp > 1 and parallel.sequence_parallel */
    PPSIM_FW_ZERO_1_2, /* parallel.zero 1 or 2 */
    PPSIM_FW_FLASH,    /* model.flash_attention */
} PpsimFrameworkWhen;

typedef struct {
    const char *key;   /* dotted path of a bool, int or enum key */
    const char *value; /* as a scenario writes it */
    PpsimFrameworkWhen when;
} PpsimFrameworkSetting;

typedef struct {
    const char *name;
    const char *summary;
    const char *source;                    /* citation keys (README References) */
    const PpsimFrameworkSetting *settings; /* closed by {NULL} */
} PpsimFramework;

/* The values of `framework`, "none" (index 0) first; NULL-terminated. */
extern const char *const ppsim_framework_names[];
/* The framework of index @index of ppsim_framework_names (1 on), NULL past the end. */
const PpsimFramework *ppsim_framework_nth(int index);
/* "with parallel.tp > 1"...; NULL for PPSIM_FW_ALWAYS. */
const char *ppsim_framework_when_text(PpsimFrameworkWhen when);
/* The name of @scenario's framework when it set @key (the scenario did not write it), else
 * NULL: for messages about a key the user never wrote. */
const char *ppsim_framework_that_set(const PpsimScenario *scenario, const char *key);

/* GPUs the job uses: tp x pp x dp (pp alone without a `parallel:` section). */
int ppsim_scenario_gpus(const PpsimScenario *scenario);

/* Whether parallel.overlap_param_gather acts: set, with a layout, under ZeRO 1 or 2 (the
 * distributed optimizer's all-gather of the updated weights; none with ZeRO 0, and ZeRO-3
 * gathers before every op). */
gboolean ppsim_scenario_overlaps_param_gather(const PpsimScenario *scenario);

G_END_DECLS
