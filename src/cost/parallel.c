/* parallel.c: tensor/sequence/data parallelism, ZeRO and Llama-style layers; see parallel.h.
 *
 * Counts per layer and microbatch (b sequences of s tokens, hidden h, FFN width f, a heads,
 * g KV heads, tp = t; heads of h/a unless model.head_dim sets d, when the query and the
 * projection input are q = a d wide and K, V kv = g d, for h and hg/a below):
 *  - FLOPs: QKV 2bsh(h + 2hg/a), projection 2bsh^2, MLP 4bshf (GELU, [NAR21] App.) or 6bshf
 *    (SwiGLU: gate, up and down matrices), attention 4bs^2h. Each GPU of a TP group does 1/t
 *    ([NAR21] §2.3: the GEMMs are split by columns then rows).
 *  - TP collectives: two all-reduces in the forward and two in the backward of each layer
 *    ([NAR21] §2.3 Fig. 5, [KOR] §4.2.2), each of the full 2sbh-byte activation; with
 *    sequence parallelism each becomes a reduce-scatter plus an all-gather ([KOR] §4.2.2),
 *    which in the ring model moves the same bytes, so the time is the same. Plus one
 *    all-reduce after the vocabulary-parallel embedding (forward) and one before the LM
 *    head (backward). Ring costs: ppsim_ring_allreduce_ps.
 *  - Activations ([KOR] §4.2): GELU keeps 10sbh replicated on every TP rank (QKV input 2,
 *    attention dropout mask 1, fc1 input 2, MLP dropout mask 1, LayerNorm inputs 4) and
 *    sbh(4 + 4g/a + 4f/h) split t ways (Q 2, K and V 4g/a, projection input 2, GeLU input
 *    2f/h, fc2 input 2f/h): sbh(10 + 24/t) for g = a, f = 4h, [KOR] Eq. (2). Sequence
 *    parallelism splits the replicated part too: 34sbh/t, [KOR] Eq. (3). SwiGLU keeps no
 *    dropout masks (8sbh replicated) and stores the gate and up outputs and the down input
 *    (6f/h split). Without FlashAttention the 5as^2b scores add 5as^2b/t.
 *  - Static memory: parameters / t per GPU, then [ZERO] §5 (ppsim_zero_static_bytes).
 *  - DP: each stage's bf16 gradients (2 bytes per parameter) are all-reduced over dp (ZeRO
 *    1-2: reduce-scatter, then an all-gather of the updated weights: the same bytes; ZeRO-3:
 *    reduce-scatter only), and ZeRO-3 all-gathers the stage's bf16 weights before each F and
 *    each B ([ZERO] §7.2.2: 3Ψ of traffic instead of 2Ψ). ZeRO-3's gathers and
 *    reduce-scatters over a group with several members a node run within the node, then
 *    across nodes at 1/local of the bytes a NIC (ppsim_par_dp_local).
 *  - Context parallelism (cp): each GPU of a tp x cp group holds s/cp tokens, so it does
 *    1/(t cp) of the FLOPs above (its queries against all s keys: 1/cp of the s x s
 *    scores too), keeps 1/cp of the activations and sends 1/cp of a boundary; gradients
 *    reduce over dp x cp ranks. The KV exchange is the kernel model's (kernels.c); this
 *    closed form does not time it.
 */
#include "cost/parallel.h"
#include "cost/memory.h"
#include "cost/mtp.h"

#include <math.h>

#define ACT_BYTES 2.0 /* bf16 */

PpsimTime
ppsim_ring_allreduce_ps(double bytes, int n, double bytes_per_s, PpsimTime latency_ps)
{
    if (n <= 1)
        return 0;
    return 2 * ppsim_ring_gather_ps(bytes, n, bytes_per_s, latency_ps);
}

PpsimTime
ppsim_ring_gather_ps(double bytes, int n, double bytes_per_s, PpsimTime latency_ps)
{
    if (n <= 1)
        return 0;
    /* clamped: n - 1 latencies of up to 10,000 s each overflow picoseconds */
    return ppsim_time_from_seconds((double)(n - 1) / n * bytes / bytes_per_s) +
           ppsim_mul_clamped(n - 1, latency_ps);
}

static gboolean
swiglu(const PpsimModel *m)
{
    return m->mlp == PPSIM_MLP_SWIGLU;
}

double
ppsim_par_layer_gemm_flops(const PpsimModel *m, int b)
{
    double s = m->seq_len, h = m->hidden, f = m->ffn_hidden;
    double mlp = (swiglu(m) ? 6.0 : 4.0) * b * s * h * f;
    return b * s * ppsim_model_attn_linear_flops(m) + mlp;
}

double
ppsim_par_layer_params(const PpsimModel *m)
{
    double h = m->hidden, f = m->ffn_hidden;
    if (swiglu(m)) { /* the attention's linears (MLA: and its latent norms), gate/up/down,
                      * two RMSNorm weights */
        PpsimAttnShape sh;
        ppsim_model_attn_shape(m, &sh);
        return sh.params + 3.0 * h * f + 2.0 * h;
    }
    return ppsim_cost_layer_params(m);
}

double
ppsim_par_model_params(const PpsimModel *m)
{
    double h = m->hidden, V = m->vocab, s = m->seq_len;
    double embed = V * h + (ppsim_model_rotary(m) ? 0.0 : s * h); /* rotary: no weights */
    double head = (m->tied_embeddings ? 0.0 : V * h) + (swiglu(m) ? h : 2.0 * h); /* + norm */
    return embed + m->layers * ppsim_par_layer_params(m) + head;
}

double
ppsim_par_layer_act_bytes(const PpsimModel *m, int b, int t, gboolean sp)
{
    double s = m->seq_len, h = m->hidden, f = m->ffn_hidden, a = m->heads, sbh = s * b * h;
    if (m->recompute == PPSIM_RECOMPUTE_FULL) /* layer input only, [KOR] Table 2 */
        return 2.0 * sbh / (sp ? t : 1);
    double masks = ppsim_model_dropout(m) ? 2.0 : 0.0; /* two dropout masks, sbh each */
    PpsimAttnShape sh;
    ppsim_model_attn_shape(m, &sh);
    /* MLA's latents, normed, and its rotary key: projected from each rank's own tokens */
    double rep = 8.0 + masks + 2.0 * (2.0 * sh.latent + sh.rope_k) / h;
    double split = 2.0 * (sh.qk + sh.k + sh.v + sh.out) / h + (swiglu(m) ? 6.0 : 4.0) * f / h;
    if (m->recompute == PPSIM_RECOMPUTE_LIGHT) { /* norm outputs, masks, MLP activation */
        rep -= 4.0 + masks + 2.0 * sh.latent / h;
        split -= 2.0 * f / h;
    }
    if (m->recompute == PPSIM_RECOMPUTE_MLA_UP) /* MLA's Q, K and V, re-created in B */
        split -= 2.0 * (sh.qk + sh.k + sh.v) / h;
    double act = sp ? sbh * (rep + split) / t : sbh * (rep + split / t);
    if (!m->flash_attention && m->recompute != PPSIM_RECOMPUTE_SELECTIVE) /* [KOR] 5as^2b */
        act += (ppsim_model_dropout(m) ? 5.0 : 2.0) * a * s * s * b / t;
    return act;
}

/* [TE] v1.10 `Linear` and `LayerNormLinear` save their FP8 input (the cast, or its transpose;
 * the norm's FP8 output) for the wgrad, and v2.x the quantized input's column-wise copy; the
 * attention, the activation's input, the norms' inputs and the residuals stay 16-bit. */
double
ppsim_par_layer_fp8_saved_bytes(const PpsimModel *m, int b, int t, gboolean sp)
{
    if (m->recompute == PPSIM_RECOMPUTE_FULL)
        return 0.0;
    double sbh = (double)m->seq_len * b * m->hidden, h = m->hidden;
    gboolean light = m->recompute == PPSIM_RECOMPUTE_LIGHT;
    PpsimAttnShape sh;
    ppsim_model_attn_shape(m, &sh);
    /* the two norm outputs (and MLA's normed latents): re-run under light */
    double rep = light ? 0.0 : 2.0 + sh.latent / h;
    double split = sh.out / h + (light ? 0.0 : m->ffn_hidden / h);
    return sp ? sbh * (rep + split) / t : sbh * (rep + split / t);
}

double
ppsim_zero_static_bytes(double params, double bytes_per_param, int zero, int dp)
{
    double K = bytes_per_param - 4.0, nd = dp;
    switch (zero) {
    case 1:
        return params * (2.0 + 2.0 + K / nd);
    case 2:
        return params * (2.0 + (2.0 + K) / nd);
    case 3:
        return params * bytes_per_param / nd;
    default:
        return params * bytes_per_param;
    }
}

void
ppsim_par_group_link(const PpsimHardware *hw, int group, int stride, double *bytes_per_s,
                     PpsimTime *latency_ps)
{
    if ((gint64)group * stride <= hw->gpus_per_node) {
        *bytes_per_s = hw->nvlink_bytes_per_s;
        *latency_ps = hw->nvlink_latency_ps;
    } else {
        *bytes_per_s = hw->network_bytes_per_s;
        *latency_ps = hw->network_latency_ps;
    }
}

int
ppsim_par_pp_stride(const PpsimScenario *sc)
{
    const PpsimParallel *par = &sc->parallel;
    int group = par->tp * par->cp; /* one pipeline device: a tp x cp group */
    return par->placement == PPSIM_PLACEMENT_TP_DP_PP ? group * par->dp : group;
}

int
ppsim_par_dp_stride(const PpsimScenario *sc)
{
    const PpsimParallel *par = &sc->parallel;
    int group = par->tp * par->cp;
    return par->placement == PPSIM_PLACEMENT_TP_DP_PP ? group : group * sc->training.pp;
}

void
ppsim_par_device_hardware(const PpsimScenario *sc, PpsimHardware *out)
{
    *out = sc->hardware;
    if (!sc->parallel.present)
        return;
    int stride = ppsim_par_pp_stride(sc);
    out->gpus_per_node = MAX(1, sc->hardware.gpus_per_node / stride);
    out->pcie_gpus_per_switch =
        MAX(1, sc->hardware.pcie_gpus_per_switch / (sc->parallel.tp * sc->parallel.cp));
}

double
ppsim_par_grad_reduce_bytes(const PpsimScenario *sc)
{
    return sc->parallel.grad_reduce_dtype == PPSIM_GRAD_REDUCE_FP32 ? 4.0 : ACT_BYTES;
}

double
ppsim_par_weight_gather_bytes(const PpsimStageCost *st, const PpsimScenario *sc)
{
    /* FP8 weights: Megatron's --fp8-param-gather all-gathers the FP8 parameters ([MEG]
     * `megatron/training/arguments.py`), NeMo's distributed Adam with fp8_params syncs them as
     * bytes ([NEMO] `nemo/core/optim/distributed_adam.py`: param_sync_dtype uint8); the
     * embedding and the LM head, never FP8, gather in bf16 */
    double bytes = ACT_BYTES * st->params;
    if (sc->training.dtype == PPSIM_DTYPE_FP8 && sc->training.fp8_weights)
        bytes -= (ACT_BYTES - 1.0) * ppsim_mem_linear_params(st, sc);
    return bytes;
}

void
ppsim_par_set_dp_halves(PpsimStageCost *st, const PpsimScenario *sc, PpsimTime rs, PpsimTime ag,
                        double rs_bytes, double ag_bytes)
{
    gboolean apart = ppsim_scenario_overlaps_param_gather(sc);
    st->dp_comm_ps = apart ? rs : rs + ag;
    st->dp_bytes = (guint64)ppsim_round_clamped(apart ? rs_bytes : rs_bytes + ag_bytes);
    st->pg_ps = apart ? ag : 0;
    st->pg_bytes = apart ? (guint64)ppsim_round_clamped(ag_bytes) : 0;
}

gboolean
ppsim_par_dp_across_nodes(const PpsimScenario *sc)
{
    return (gint64)sc->parallel.dp * ppsim_par_dp_stride(sc) > sc->hardware.gpus_per_node;
}

int
ppsim_par_group_per_node(const PpsimHardware *hw, int group, int stride)
{
    return MAX(1, MIN(group, hw->gpus_per_node / MAX(1, stride)));
}

int
ppsim_par_dp_local(const PpsimScenario *sc)
{
    if (!ppsim_par_dp_across_nodes(sc))
        return 1;
    return ppsim_par_group_per_node(&sc->hardware, sc->parallel.dp, ppsim_par_dp_stride(sc));
}

/* A ring all-gather (or reduce-scatter) of @bytes over the dp group: with @local members a
 * node, the ring within the node over NVLink, then across nodes each NIC carrying 1/local of
 * the data (ppsim_par_dp_local), as the hierarchical all-reduce of the kernel model counts
 * it. */
static PpsimTime
dp_gather_ps(const PpsimScenario *sc, double bytes, int dp, double bw, PpsimTime lat)
{
    int local = ppsim_par_dp_local(sc);
    if (local <= 1)
        return ppsim_ring_gather_ps(bytes, dp, bw, lat);
    const PpsimHardware *hw = &sc->hardware;
    return ppsim_ring_gather_ps(bytes, local, hw->nvlink_bytes_per_s, hw->nvlink_latency_ps) +
           ppsim_ring_gather_ps(bytes / local, MAX(1, dp / local), bw, lat);
}

gboolean
ppsim_par_active(const PpsimScenario *sc)
{
    return sc->parallel.present || sc->model.mlp == PPSIM_MLP_SWIGLU;
}

static PpsimTime
time_of(double flops, double rate)
{
    return ppsim_time_from_seconds(flops / rate);
}

int
ppsim_par_fill_stage(PpsimStageCost *st, const PpsimScenario *sc, double rate)
{
    const PpsimModel *model = &sc->model;
    const PpsimHardware *hw = &sc->hardware;
    const PpsimParallel *par = &sc->parallel;
    int b = sc->training.microbatch_size, t = par->tp, dp = par->dp, cp = MAX(1, par->cp);
    gboolean sp = par->sequence_parallel && t > 1;
    double s = model->seq_len, h = model->hidden, V = model->vocab, n = ppsim_cost_stage_blocks(st);
    double sbh = s * b * h, rep_div = sp ? t : 1;
    /* context parallelism: a GPU holds s/cp of the tokens, and computes their queries
     * against all s keys, so each count below (linear in s, or the s x s scores) is 1/cp
     * of the sequence's; each GPU's TP collectives and boundary sends carry its s/cp tokens */
    double tokens = sbh / cp;
    double gemm = n * ppsim_par_layer_gemm_flops(model, b);
    PpsimAttnShape sh;
    ppsim_model_attn_shape(model, &sh);
    double attn = n * 2.0 * b * s * s * (sh.qk + sh.out);
    double fwd = gemm + attn, bwd_in = gemm + 2.0 * attn, bwd_w = gemm;
    double act = n * ppsim_par_layer_act_bytes(model, b, t, sp);
    PpsimModel plain = *model;
    plain.flash_attention = TRUE;
    double act_w = n * ppsim_par_layer_act_bytes(&plain, b, t, sp);
    if (model->recompute != PPSIM_RECOMPUTE_FULL && model->recompute != PPSIM_RECOMPUTE_LIGHT)
        act_w *= 32.0 / 34.0; /* [ZB] Table 1 */
    if (sc->training.dtype == PPSIM_DTYPE_FP8) {
        /* FP8's saved inputs are GEMM inputs: W keeps them too */
        double fp8 = n * ppsim_par_layer_fp8_saved_bytes(model, b, t, sp);
        act -= fp8;
        act_w -= fp8;
    }
    double params = n * ppsim_par_layer_params(model);
    if (model->recompute == PPSIM_RECOMPUTE_FULL)
        bwd_in += fwd;
    else if (model->recompute == PPSIM_RECOMPUTE_SELECTIVE && !model->flash_attention)
        bwd_in += attn;
    else if (model->recompute == PPSIM_RECOMPUTE_MLA_UP) /* MLA's up-projections re-run */
        bwd_in += n * 2.0 * b * s * ppsim_model_mla_up_params(model);

    double tp_bw = 0;
    PpsimTime tp_lat = 0;
    ppsim_par_group_link(hw, t, 1, &tp_bw, &tp_lat);
    PpsimTime ar = ppsim_ring_allreduce_ps(ACT_BYTES * tokens, t, tp_bw, tp_lat);
    PpsimTime tp_f = ppsim_mul_clamped(2 * ppsim_cost_stage_blocks(st), ar), tp_b = tp_f;
    if (model->recompute == PPSIM_RECOMPUTE_FULL)
        tp_b += tp_f; /* the re-run forward's collectives */

    if (st->has_embedding) {
        params += V * h + (ppsim_model_rotary(model) ? 0.0 : s * h);
        if (ppsim_model_dropout(model))
            act += sbh / rep_div; /* embedding dropout mask, [KOR] §4.3 */
        tp_f += ar;
    }
    if (st->has_head) {
        double head = 2.0 * b * s * h * V;
        fwd += head;
        bwd_in += head;
        bwd_w += head;
        params += (ppsim_cost_head_is_embedding(st, model) ? 0.0 : V * h) +
                  (model->mlp == PPSIM_MLP_SWIGLU ? h : 2.0 * h);
        act += ppsim_mem_logits_kept_bytes(sc) + 2.0 * sbh / rep_div; /* + final norm input */
        act_w += 2.0 * sbh / rep_div;
        tp_b += ar;
    }
    PpsimMtpExtras mtp; /* multi-token prediction beyond its layers */
    ppsim_mtp_extras(st, sc, t, sp, &mtp);
    if (st->mtp > 0) {
        ppsim_mtp_add(&mtp, &fwd, &bwd_in, &bwd_w, &params, &act, &act_w);
        /* a depth: the embedding's reduction, eh_proj's input and output gathers; in B the
         * head's and eh_proj's input gradients (all-reduce-sized, as this closed form counts
         * every TP collective) */
        tp_f += ppsim_mul_clamped(2 * st->mtp, ar);
        tp_b += ppsim_mul_clamped(2 * st->mtp, ar);
    }
    double r = rate * (t > 1 ? par->tp_efficiency : 1.0);
    double params_gpu = params / t;
    /* ZeRO-3's units, gathered one at a time: a layer, the embedding, the head */
    double unit = ppsim_cost_stage_blocks(st) > 0 ? ppsim_par_layer_params(model) : 0.0;
    if (st->has_embedding || ppsim_mtp_embedding_copy(st, model))
        unit = MAX(unit, V * h + (ppsim_model_rotary(model) ? 0.0 : s * h));
    if (st->has_head)
        unit = MAX(unit, V * h);
    st->unit_params = unit / t;
    /* the gradients' group: dp x cp ranks, the cp ranks of a replica adjacent */
    int group = dp * cp;
    double dp_bw = 0;
    PpsimTime dp_lat = 0;
    ppsim_par_group_link(hw, group, ppsim_par_dp_stride(sc) / cp, &dp_bw, &dp_lat);
    /* the weights gathered (bf16, FP8 weights in FP8), the gradients reduced
     * (parallel.grad_reduce_dtype) */
    st->params = params_gpu;
    double weight_bytes = ppsim_par_weight_gather_bytes(st, sc);
    double grad_bytes = ppsim_par_grad_reduce_bytes(sc) * params_gpu;
    PpsimTime gather = dp_gather_ps(sc, weight_bytes, group, dp_bw, dp_lat);
    st->zero_gather_ps = par->zero == 3 ? gather : 0;
    double share = group > 1 ? (double)(group - 1) / group : 0.0;
    double ring = share * weight_bytes, ring_g = share * grad_bytes;
    /* ZeRO-3's flows (sim-parallel.c) cross the GPU's NIC: its share of the ring's data */
    int local = ppsim_par_dp_local(sc);
    st->zero_bytes = par->zero == 3 ? (guint64)ppsim_round_clamped(ring / local) : 0;
    st->pg_ps = 0;
    st->pg_bytes = 0;
    if (par->zero == 3) { /* the gradients' reduce-scatter */
        st->dp_bytes = (guint64)ppsim_round_clamped(ring_g / local);
        st->dp_comm_ps = dp_gather_ps(sc, grad_bytes, group, dp_bw, dp_lat);
    } else if (par->zero == 0) { /* an all-reduce of the gradients */
        st->dp_bytes = (guint64)ppsim_round_clamped(2.0 * ring_g);
        st->dp_comm_ps = ppsim_ring_allreduce_ps(grad_bytes, group, dp_bw, dp_lat);
    } else { /* the gradients' reduce-scatter, the weights' all-gather: a ring's halves (with
              * grad_sync: all_reduce the gradients' whole ring, DeepSpeed's BF16_Optimizer) */
        PpsimTime rs = ppsim_ring_allreduce_ps(grad_bytes, group, dp_bw, dp_lat);
        PpsimTime ag = ppsim_ring_allreduce_ps(weight_bytes, group, dp_bw, dp_lat);
        gboolean whole = par->grad_sync == PPSIM_GRAD_SYNC_ALL_REDUCE;
        ppsim_par_set_dp_halves(st, sc, whole ? rs : rs / 2, ag - ag / 2,
                                whole ? 2.0 * ring_g : ring_g, ring);
    }
    st->tp_comm_f_ps = tp_f;
    st->tp_comm_b_ps = tp_b;
    st->fwd_flops = fwd; /* the tp x cp group's */
    double split = (double)t * cp;
    st->est.f_ps = time_of(fwd / split, r) + tp_f + st->zero_gather_ps;
    st->est.b_ps = time_of(bwd_in / split, r) + tp_b + st->zero_gather_ps;
    st->est.w_ps = time_of(bwd_w / split, r);
    st->est.r_ps = time_of(fwd / split, r) + tp_f;
    st->est.act = ppsim_round_clamped(act / cp);
    st->est.act_w = ppsim_round_clamped(MIN(act_w, act) / cp);
    st->static_mem = ppsim_round_clamped(
        ppsim_zero_static_bytes(params_gpu, sc->training.bytes_per_param, par->zero, group));
    st->p2p_bytes = (guint64)ppsim_round_clamped(ACT_BYTES * tokens / t);
    st->offload_bytes = (guint64)st->est.act;
    return (int)rep_div;
}
