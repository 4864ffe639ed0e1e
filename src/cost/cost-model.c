/* cost-model.c: per-stage costs from a scenario; see cost-model.h.
 *
 * Hardware mode: FLOPs per layer [NAR21] App., the B/W
 * split of [ZB] Table 1, activation bytes of [KOR] §4.1, parameters of [NAR21] Eq. (2), the
 * embedding and LM head on the first and last stage. Durations are FLOPs / (peak x
 * efficiency), rounded once to picoseconds. Attention counts the full s^2 (no causal halving),
 * as [NAR21]/[KOR] do.
 */
#include "cost/cost-model.h"
#include "cost/moe.h"
#include "cost/overlap.h"
#include "cost/parallel.h"
#include "cost/kernels.h"
#include "cost/memory.h"
#include "cost/mtp.h"
#include "hw/topology.h"
#include "util/ppsim-error.h"

#include <math.h>

/* bf16 activations and messages: 2 bytes per element. */
#define ACT_BYTES 2.0
/* Token ids: 64-bit integers. */
#define TOKEN_BYTES 8.0

/* FLOPs of the GEMMs of one layer's forward: the attention's linears (QKV with GQA and the
 * output projection, or MLA's, ppsim_model_attn_shape), the MLP. */
static double
layer_gemm_flops(const PpsimModel *model, int b)
{
    double s = model->seq_len, h = model->hidden, f = model->ffn_hidden;
    return b * s * ppsim_model_attn_linear_flops(model) + 4.0 * b * s * h * f;
}

/* FLOPs of QK^T and attention x V: 2bs^2h each ([NAR21] App.), over the queries' and the
 * output's widths (model.head_dim, MLA's heads). */
static double
layer_attn_flops(const PpsimModel *model, int b)
{
    PpsimAttnShape sh;
    ppsim_model_attn_shape(model, &sh);
    double s = model->seq_len;
    return 2.0 * b * s * s * (sh.qk + sh.out);
}

double
ppsim_cost_layer_fwd_flops(const PpsimModel *model, int microbatch_size)
{
    /* With kv_heads = heads and ffn = 4h: 24bsh^2 + 4bs^2h, [NAR21] App. */
    return layer_gemm_flops(model, microbatch_size) + layer_attn_flops(model, microbatch_size);
}

/* [KOR] §4.1 itemised per layer: attention 11sbh + 5as^2b (QKV input 2, Q 2, K and V 4,
 * projection input 2, dropout mask 1), MLP 19sbh (fc1 input 2, GeLU input 8, fc2 input 8,
 * mask 1), two LayerNorm inputs 4. Generalised (DERIVED here) to g KV heads and FFN width f:
 * sbh(14 + 4g/a + 4f/h), which gives 34sbh for g = a, f = 4h. (6f/h, as some transcriptions
 * write it, does not reduce to 34; 4f/h does.) With model.head_dim the query and the
 * projection input are q wide and K, V kv wide: sb(8h + 4q + 4kv + 4f) before the masks.
 * The 5as^2b softmax/dropout term is absent
 * with FlashAttention or selective recompute; full recompute keeps only the layer input.
 * Light recompute ([PO] App. C: LayerNorm, GeLU and dropout re-run in the backward) drops
 * what those re-create: the two LayerNorm outputs (the QKV and fc1 inputs, 2sbh each; their
 * inputs stay), the GeLU output (the fc2 input, 2sbf) and the two dropout masks (sbh each):
 * 34sbh -> 20sbh, as the paper states. Its compute is elementwise, negligible next to the
 * GEMMs, so no FLOPs are added; the paper measured a 1-2% slowdown, which is not modelled. */
double
ppsim_cost_layer_act_bytes(const PpsimModel *model, int microbatch_size)
{
    double s = model->seq_len, h = model->hidden, f = model->ffn_hidden, a = model->heads;
    PpsimAttnShape sh;
    ppsim_model_attn_shape(model, &sh);
    double b = microbatch_size;
    if (model->recompute == PPSIM_RECOMPUTE_FULL)
        return 2.0 * s * b * h;                            /* [KOR] Table 2 */
    double masks = ppsim_model_dropout(model) ? 2.0 : 0.0; /* model.dropout: false, none */
    /* Q, K, V and the projection's input (4q + 4kv with MHA or GQA); MLA's latents and their
     * normed copies, and its rotary key */
    double attn = 2.0 * (sh.qk + sh.k + sh.v + sh.out) + 2.0 * (2.0 * sh.latent + sh.rope_k);
    double act = s * b * (h * (8.0 + masks) + attn + 4.0 * f);
    if (model->recompute == PPSIM_RECOMPUTE_LIGHT) /* [PO] App. C: 34sbh -> 20sbh */
        act -= s * b * (h * (4.0 + masks) + 2.0 * sh.latent + 2.0 * f);
    if (model->recompute == PPSIM_RECOMPUTE_MLA_UP) /* MLA's Q, K and V, re-created in B */
        act -= s * b * 2.0 * (sh.qk + sh.k + sh.v);
    if (!model->flash_attention && model->recompute != PPSIM_RECOMPUTE_SELECTIVE)
        act += (masks > 0 ? 5.0 : 2.0) * a * s * s * b; /* without dropout: the softmax only */
    return act;
}

/* [ZB] Table 1: W needs 32sbh of the 34sbh (the GEMM inputs), so B frees the rest. */
double
ppsim_cost_layer_act_w_bytes(const PpsimModel *model, int microbatch_size)
{
    PpsimModel plain = *model;
    plain.flash_attention = TRUE;
    if (model->recompute == PPSIM_RECOMPUTE_FULL || model->recompute == PPSIM_RECOMPUTE_LIGHT)
        return ppsim_cost_layer_act_bytes(&plain, microbatch_size); /* all GEMM-input sources */
    return ppsim_cost_layer_act_bytes(&plain, microbatch_size) * 32.0 / 34.0;
}

/* 12h^2 + 13h for MHA with a 4h MLP ([NAR21] Eq. (2)), generalised to GQA, FFN width and
 * model.head_dim: QKV h(q + 2kv) + bias, projection qh + h, MLP 2hf + f + h, two LayerNorms
 * 4h. */
double
ppsim_cost_layer_params(const PpsimModel *model)
{
    double h = model->hidden, f = model->ffn_hidden;
    PpsimAttnShape sh;
    ppsim_model_attn_shape(model, &sh);
    /* the QKV and projection biases (MLA has none) */
    double bias = model->mla.kv_lora_rank > 0 ? 0.0 : sh.linear[0].out + sh.linear[1].out;
    return sh.params + bias + 2.0 * h * f + f + h + 4.0 * h;
}

double
ppsim_cost_offload_ratio(int hidden, int seq_len, double compute_flops_per_s,
                         double offload_bytes_per_s)
{
    /* [PO] §1 Formula 1 */
    return 10.0 / (3.0 * (6.0 * hidden + seq_len)) * compute_flops_per_s / offload_bytes_per_s;
}

gint64
ppsim_cost_stage_input_bytes(const PpsimStageCost *st, const PpsimScenario *sc, int split)
{
    /* context parallelism: the GPU's s/cp tokens */
    double s = (double)sc->model.seq_len / (sc->parallel.present ? MAX(1, sc->parallel.cp) : 1),
           b = sc->training.microbatch_size;
    if (st->has_embedding) /* token ids, 8-byte integers: the embedding is re-run too */
        return ppsim_round_clamped(TOKEN_BYTES * s * b);
    if (st->layers == 0 && !st->has_head)
        return 0;
    return ppsim_round_clamped(ACT_BYTES * s * b * sc->model.hidden / split);
}

static PpsimTime
time_of(double flops, double rate)
{
    return ppsim_time_from_seconds(flops / rate);
}

static gint64
explicit_units(double units)
{
    return ppsim_round_clamped(units * PPSIM_EXPLICIT_MEM_SCALE);
}

static double
stage_value(const GArray *list, int s, double fallback)
{
    return list != NULL ? g_array_index(list, double, s) : fallback;
}

static gboolean
costs_check_list(const PpsimScenario *sc, const GArray *list, const char *key, int n_stages,
                 GError **error)
{
    if (list == NULL || (int)list->len == n_stages)
        return TRUE;
    g_autofree char *path = g_strdup_printf("costs.%s", key);
    g_autofree char *where = ppsim_scenario_where_mark(sc, path, sc->costs.mark);
    g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                "%s: 'costs.%s' has %u entries but the schedule has %d stages", where, key,
                list->len, n_stages);
    return FALSE;
}

static gboolean
costs_fill_explicit(PpsimCosts *c, const PpsimScenario *sc, GError **error)
{
    const PpsimCostsSpec *cs = &sc->costs;
    if (!costs_check_list(sc, cs->stage_forward, "stage_forward", c->n_stages, error) ||
        !costs_check_list(sc, cs->stage_backward_input, "stage_backward_input", c->n_stages,
                          error) ||
        !costs_check_list(sc, cs->stage_backward_weight, "stage_backward_weight", c->n_stages,
                          error) ||
        !costs_check_list(sc, cs->stage_activation, "stage_activation", c->n_stages, error))
        return FALSE;
    double ms = (double)PPSIM_PS_PER_MS;
    for (int s = 0; s < c->n_stages; s++) {
        PpsimStageCost *st = &c->stage[s];
        st->est.f_ps = cs->stage_forward
                           ? ppsim_round_clamped(stage_value(cs->stage_forward, s, 0) * ms)
                           : cs->forward_ps;
        st->est.b_ps = cs->stage_backward_input
                           ? ppsim_round_clamped(stage_value(cs->stage_backward_input, s, 0) * ms)
                           : cs->backward_input_ps;
        st->est.w_ps = cs->stage_backward_weight
                           ? ppsim_round_clamped(stage_value(cs->stage_backward_weight, s, 0) * ms)
                           : cs->backward_weight_ps;
        st->est.r_ps = cs->recompute_ps;
        st->est.off_ps = cs->offload_ps;
        double act = stage_value(cs->stage_activation, s, cs->activation);
        st->est.act = explicit_units(act);
        st->est.act_w = explicit_units(cs->weight_activation * (act / cs->activation));
        if (cs->activation <= 0)
            st->est.act_w = 0;
        st->act_ckpt = 0;
        st->opt_ps = cs->optimizer_ps;
    }
    c->p2p_latency_ps = cs->p2p_ps;
    c->mem_scale = PPSIM_EXPLICIT_MEM_SCALE;
    c->memory_unit = "units";
    c->memory_limit = explicit_units(sc->memory_limit_units);
    return TRUE;
}

/* Layers of each stage: the explicit list, or an even split where stage s gets
 * floor((s+1)L/S) - floor(sL/S) layers. */
static gboolean
costs_split_layers(PpsimCosts *c, const PpsimScenario *sc, GError **error)
{
    const PpsimModel *model = &sc->model;
    int S = c->n_stages, L = model->layers;
    if (model->stage_layers != NULL) {
        int sum = 0;
        for (guint i = 0; i < model->stage_layers->len; i++)
            sum += g_array_index(model->stage_layers, int, i);
        if ((int)model->stage_layers->len != S || sum != L) {
            g_autofree char *where =
                ppsim_scenario_where_mark(sc, "model.stage_layers", model->stage_layers_mark);
            g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                        "%s: 'model.stage_layers' must list %d stages summing to %d "
                        "layers, got %u stages summing to %d",
                        where, S, L, model->stage_layers->len, sum);
            return FALSE;
        }
    } else if (L < S) { /* with or without `parallel:`: an uneven split is as even as can be */
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                    "%s: %d layers cannot fill %d pipeline stages (use model.stage_layers "
                    "to place them explicitly)",
                    sc->path ? sc->path : "", L, S);
        return FALSE;
    }
    int first = 0;
    for (int s = 0; s < S; s++) {
        int n = model->stage_layers ? g_array_index(model->stage_layers, int, s)
                                    : (int)(((gint64)(s + 1) * L) / S - ((gint64)s * L) / S);
        c->stage[s].first_layer = first;
        c->stage[s].layers = n;
        first += n;
    }
    return TRUE;
}

/* One stage in hardware mode: transformer layers plus the embedding (first stage) or the
 * final norm + LM head + loss (last stage). */
static void
costs_fill_stage_hw(PpsimStageCost *st, const PpsimScenario *sc, double rate)
{
    const PpsimModel *model = &sc->model;
    int b = sc->training.microbatch_size;
    double s = model->seq_len, h = model->hidden, V = model->vocab, n = ppsim_cost_stage_blocks(st);
    double gemm = n * layer_gemm_flops(model, b), attn = n * layer_attn_flops(model, b);
    double fwd = gemm + attn;
    /* [ZB] Table 1: B = gemm + 2 x attention, W = gemm (per layer, B + W = 2F). */
    double bwd_in = gemm + 2.0 * attn, bwd_w = gemm;
    double act = n * ppsim_cost_layer_act_bytes(model, b);
    double act_w = n * ppsim_cost_layer_act_w_bytes(model, b);
    if (sc->training.dtype == PPSIM_DTYPE_FP8) { /* GEMM inputs: W keeps them too */
        double fp8 = n * ppsim_par_layer_fp8_saved_bytes(model, b, 1, FALSE);
        act -= fp8;
        act_w -= fp8;
    }
    double params = n * ppsim_cost_layer_params(model);
    if (model->recompute == PPSIM_RECOMPUTE_FULL)
        bwd_in += fwd; /* the forward is re-run before B: [NAR21] App., 4x forward in all */
    else if (model->recompute == PPSIM_RECOMPUTE_SELECTIVE && !model->flash_attention)
        bwd_in += attn; /* attention core re-run: [KOR] §5. With FlashAttention there is no
                         * stored s^2 term to drop, so selective recompute is a no-op (as in
                         * Megatron-LM, which skips it then); the runner warns. */
    else if (model->recompute == PPSIM_RECOMPUTE_MLA_UP) /* MLA's up-projections re-run */
        bwd_in += n * 2.0 * b * s * ppsim_model_mla_up_params(model);
    if (st->has_embedding) {
        params += V * h + (ppsim_model_rotary(model) ? 0.0 : s * h); /* [NAR21] Eq. (2) */
        if (ppsim_model_dropout(model))
            act += s * b * h; /* embedding dropout mask, [KOR] §4.3 */
    }
    if (st->has_head) {
        double head = 2.0 * b * s * h * V; /* logits, [NAR21] App.: 2BshV forward */
        fwd += head;
        bwd_in += head;
        bwd_w += head;
        /* the LM head (unless it is this stage's embedding) + final LayerNorm */
        params += (ppsim_cost_head_is_embedding(st, model) ? 0.0 : V * h) + 2.0 * h;
        act += ppsim_mem_logits_kept_bytes(sc) + 2.0 * s * b * h; /* + final LN input */
        act_w += 2.0 * s * b * h;
    }
    PpsimMtpExtras mtp; /* multi-token prediction beyond its layers */
    ppsim_mtp_extras(st, sc, 1, FALSE, &mtp);
    ppsim_mtp_add(&mtp, &fwd, &bwd_in, &bwd_w, &params, &act, &act_w);
    st->fwd_flops = fwd;
    st->est.f_ps = time_of(fwd, rate);
    st->est.b_ps = time_of(bwd_in, rate);
    st->est.w_ps = time_of(bwd_w, rate);
    st->est.r_ps = time_of(fwd, rate);
    st->est.act = ppsim_round_clamped(act);
    st->est.act_w = ppsim_round_clamped(MIN(act_w, act));
    /* An R op re-runs the stage's forward as one block ([TP] §4.2 block-wise recompute), so F
     * keeps only the stage's input: one layer input, 2sbh ([KOR] Table 2), or on the first
     * stage the token ids. */
    st->act_ckpt = ppsim_cost_stage_input_bytes(st, sc, 1);
    st->params = params;
    st->static_mem = ppsim_round_clamped(params * sc->training.bytes_per_param);
    st->p2p_bytes = (guint64)ppsim_round_clamped(s * b * h * ACT_BYTES);
    st->offload_bytes = (guint64)st->est.act;
}

/* model.stage_recompute must name one mode per stage. */
static gboolean
costs_check_stage_recompute(const PpsimCosts *c, const PpsimScenario *sc, GError **error)
{
    const GArray *list = sc->model.stage_recompute;
    if (list == NULL || (int)list->len == c->n_stages)
        return TRUE;
    g_autofree char *where =
        ppsim_scenario_where_mark(sc, "model.stage_recompute", sc->model.stage_recompute_mark);
    g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                "%s: 'model.stage_recompute' must list %d stages, got %u", where, c->n_stages,
                list->len);
    return FALSE;
}

static void costs_fill_one(PpsimStageCost *st, const PpsimScenario *sc, double rate);

/* The time of the forward re-run inside one B of a stage filled by the model with @model's
 * recompute mode: the whole forward of its layers (full), the attention core (selective
 * without FlashAttention), else nothing. What bubble attribution counts as recompute. */
static PpsimTime
costs_backward_recompute(const PpsimStageCost *st, const PpsimModel *model, const PpsimScenario *sc,
                         double rate)
{
    if (ppsim_cost_stage_blocks(st) == 0)
        return 0;
    PpsimStageCost probe = {.first_layer = st->first_layer,
                            .layers = st->layers,
                            .has_embedding = st->has_embedding,
                            .has_head = st->has_head,
                            .mtp = st->mtp};
    PpsimScenario tmp = *sc;
    tmp.model = *model;
    tmp.model.recompute = PPSIM_RECOMPUTE_NONE;
    costs_fill_one(&probe, &tmp, rate);
    return MAX(0, st->est.b_ps - probe.est.b_ps);
}

static void
costs_fill_one(PpsimStageCost *st, const PpsimScenario *sc, double rate)
{
    if (ppsim_par_active(sc)) /* what R re-runs from: the stage's (split) input */
        st->act_ckpt = ppsim_cost_stage_input_bytes(st, sc, ppsim_par_fill_stage(st, sc, rate));
    else
        costs_fill_stage_hw(st, sc, rate);
    if (ppsim_kernels_active(sc)) /* the times, kernel by kernel; memory stays as filled */
        ppsim_kernels_fill_stage(st, sc);
    /* MoE layers (moe.c): parameters, memory and the all-to-alls; nothing for a dense model.
     * Their compute is the FLOPs at @rate, or under the kernel model kernels.c's. */
    ppsim_moe_fill_stage(st, sc, rate);
    /* FSDP2's copies and a gradient accumulation apart from the GEMMs: from the parameters
     * with experts */
    ppsim_kernels_fill_zero3_copies(st, sc);
    ppsim_kernels_fill_grad_accumulation(st, sc);
}

/* {mode: k} in model.stage_recompute: @st was filled with the model's mode; the first k of
 * its layers (those Megatron's block method recomputes) take @mode instead. The stage
 * changes by what those k layers change between the two modes, priced as the layers they
 * are (dense or MoE: the probes start at the stage's first layer); every per-layer quantity
 * is linear in the layers, and params do not depend on the mode. */
static void
costs_mix_layers(PpsimStageCost *st, const PpsimScenario *sc, PpsimRecompute mode, int k,
                 double rate)
{
    PpsimScenario mixed = *sc;
    PpsimStageCost base = {.first_layer = st->first_layer, .layers = k}, other = base;
    costs_fill_one(&base, sc, rate);
    mixed.model.recompute = mode;
    costs_fill_one(&other, &mixed, rate);
    st->est.f_ps += other.est.f_ps - base.est.f_ps;
    st->est.b_ps += other.est.b_ps - base.est.b_ps;
    st->est.w_ps += other.est.w_ps - base.est.w_ps;
    st->est.r_ps += other.est.r_ps - base.est.r_ps;
    st->est.act += other.est.act - base.est.act;
    st->est.act_w += other.est.act_w - base.est.act_w;
    st->tp_comm_f_ps += other.tp_comm_f_ps - base.tp_comm_f_ps;
    st->tp_comm_b_ps += other.tp_comm_b_ps - base.tp_comm_b_ps;
    for (int i = 0; i < 3; i++) {
        st->kern_f_ps[i] += other.kern_f_ps[i] - base.kern_f_ps[i];
        st->kern_b_ps[i] += other.kern_b_ps[i] - base.kern_b_ps[i];
        st->kern_w_ps[i] += other.kern_w_ps[i] - base.kern_w_ps[i];
    }
    /* the MoE all-to-alls a re-run block repeats in B (moe.c), which the replay sends as
     * flows beside the compute */
    st->ep_comm_b_ps += other.ep_comm_b_ps - base.ep_comm_b_ps;
    if (other.pair_layers != base.pair_layers) /* B re-runs all-to-alls in one mode */
        st->pair_layers = 0;                   /* the whole-stage pair model */
    st->ep_bytes_b += other.ep_bytes_b - base.ep_bytes_b;
    st->ep_near_bytes_b += other.ep_near_bytes_b - base.ep_near_bytes_b;
    st->offload_bytes = (guint64)st->est.act;
}

static gboolean
costs_fill_hardware(PpsimCosts *c, const PpsimScenario *sc, GError **error)
{
    if (!costs_split_layers(c, sc, error) || !costs_check_stage_recompute(c, sc, error))
        return FALSE;
    if (!ppsim_kernels_check(sc, error))
        return FALSE;
    const PpsimHardware *hw = &sc->hardware;
    /* the closed-form rate; under the kernel model it only seeds times that are replaced
     * (the offload ratio k below then takes the rate the kernels achieve) */
    double rate = hw->gpu_peak_flops * (ppsim_kernels_active(sc) ? 1.0 : hw->gpu_efficiency);
    const GArray *counts = sc->model.stage_recompute_layers;
    for (int s = 0; s < c->n_stages; s++) {
        PpsimStageCost *st = &c->stage[s];
        st->has_embedding = s == 0;
        st->has_head = s == c->n_stages - 1;
        st->mtp = st->has_head ? sc->model.mtp_layers : 0;
        /* a per-stage recompute mode replaces the model's for this stage only (or for k of
         * its layers) */
        PpsimScenario stage_sc = *sc;
        PpsimRecompute mode = sc->model.recompute;
        if (sc->model.stage_recompute != NULL)
            mode = (PpsimRecompute)g_array_index(sc->model.stage_recompute, int, s);
        int k = counts != NULL && (int)counts->len > s ? g_array_index(counts, int, s) : -1;
        if (k > st->layers) {
            g_autofree char *where = ppsim_scenario_where_mark(sc, "model.stage_recompute",
                                                               sc->model.stage_recompute_mark);
            g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                        "%s: 'model.stage_recompute' puts %d layers of stage %d in mode "
                        "'%s', but the stage has %d",
                        where, k, s, ppsim_recompute_name(mode), st->layers);
            return FALSE;
        }
        gboolean mix = k >= 0 && k < st->layers;
        if (!mix)
            stage_sc.model.recompute = mode;
        st->recompute = mode;
        costs_fill_one(st, &stage_sc, rate);
        if (mix && k > 0)
            costs_mix_layers(st, &stage_sc, mode, k, rate);
        st->b_recompute_ps = costs_backward_recompute(st, &stage_sc.model, &stage_sc, rate);
        ppsim_mem_fill_stage(st, &stage_sc);
        /* one-way offload time estimate over the GPU's PCIe link, for generators */
        st->est.off_ps = ppsim_time_from_seconds((double)st->offload_bytes / hw->pcie_bytes_per_s);
    }
    if (ppsim_kernels_active(sc)) { /* the model-FLOP rate one GPU achieves on stage 0 */
        const PpsimStageCost *st = &c->stage[0];
        double t = (double)(st->est.f_ps + st->est.b_ps - st->b_recompute_ps + st->est.w_ps);
        double group = sc->parallel.present ? (double)sc->parallel.tp * sc->parallel.cp : 1.0;
        if (t > 0 && st->fwd_flops > 0)
            rate = 3.0 * st->fwd_flops / group / (t / PPSIM_PS_PER_S);
    }
    if ((sc->model.tied_embeddings || sc->model.mtp_layers > 0) && c->n_stages > 1) {
        /* [MEG] finalize_model_grads (2021: training.py): the first and the last stage
         * all-reduce the shared matrix's gradient, V/tp x h a GPU; with MTP depths the last
         * stage's copy of the embedding (mtp.h) is shared the same way */
        double t = sc->parallel.present ? MAX(1, sc->parallel.tp) : 1;
        c->tied_grad_bytes = (guint64)ppsim_round_clamped(ppsim_par_grad_reduce_bytes(sc) *
                                                          sc->model.vocab * sc->model.hidden / t);
    }
    c->p2p_latency_ps = hw->nvlink_latency_ps;
    c->mem_scale = 1.0;
    c->memory_unit = "bytes";
    c->memory_limit = (gint64)sc->memory_limit_bytes;
    /* 0 means "no limit" only when memory.limit says so; a GPU of 0 bytes (the limit's
     * default) holds nothing: the smallest limit a pool enforces, 1 byte, makes every device
     * that holds a byte out of memory */
    if (c->memory_limit == 0 && !sc->memory_limit_set)
        c->memory_limit = 1;
    c->offload_ratio_k =
        ppsim_cost_offload_ratio(sc->model.hidden, sc->model.seq_len, rate, hw->pcie_bytes_per_s);
    /* T_o / T_c of one layer as this scenario stores it: the round trip of its activation
     * over the GPU's PCIe link against its F + B + W (= Formula 1 with recompute: light) */
    int b = sc->training.microbatch_size;
    double layer_compute = 3.0 * ppsim_cost_layer_fwd_flops(&sc->model, b); /* B + W = 2F */
    c->offload_ratio_k_scenario =
        (2.0 * ppsim_cost_layer_act_bytes(&sc->model, b) / hw->pcie_bytes_per_s) /
        (layer_compute / rate);
    /* a mixture of experts: one of its MoE layers, as a one-layer stage prices it on one GPU
     * (its experts' activations and all-to-alls; the re-run forward of a recompute mode not
     * counted), where the formula above knows only the dense layer */
    if (ppsim_moe_layers_in(&sc->model, 0, sc->model.layers) > 0) {
        PpsimStageCost one = {.first_layer = MIN(sc->model.moe.dense_layers, sc->model.layers - 1),
                              .layers = 1};
        costs_fill_one(&one, sc, rate);
        double tc = (double)(one.est.f_ps + one.est.b_ps + one.est.w_ps -
                             costs_backward_recompute(&one, &sc->model, sc, rate)) /
                    PPSIM_PS_PER_S;
        if (tc > 0)
            c->offload_ratio_k_scenario = (2.0 * one.est.act / hw->pcie_bytes_per_s) / tc;
    }
    return TRUE;
}

/* The slowest a byte can move in hardware mode (bytes/s), and the summed latencies of the
 * longest path (ps): the worst case of every transfer, for the bound below. */
static void
costs_slowest_path(const PpsimScenario *sc, double *bytes_per_s, double *latency_ps)
{
    const PpsimHardware *hw = &sc->hardware;
    double bw = MIN(hw->nvlink_bytes_per_s, hw->pcie_bytes_per_s);
    bw = MIN(bw, ppsim_pcie_uplink_bytes_per_s(hw) * ppsim_pcie_shared_efficiency(hw));
    if (hw->network_bytes_per_s > 0)
        bw = MIN(bw, hw->network_bytes_per_s);
    *bytes_per_s = bw;
    *latency_ps =
        (double)hw->nvlink_latency_ps + 2.0 * hw->pcie_latency_ps + 2.0 * hw->network_latency_ps;
}

/* An upper bound, in double, on an iteration's time and memory, checked against
 * PPSIM_COST_MAX: every op of every microbatch, collective and transfer one after another
 * (transfers at the slowest link's speed, a saturated bottleneck delivering at least that),
 * and every activation of every microbatch resident at once. A run within both cannot
 * overflow the engine's int64 picoseconds or bytes, which are sums of these terms. */
enum { PART_OPS, PART_COLLECTIVES, PART_LATENCY, PART_TRANSFERS, PART_OPTIMIZER, N_PARTS };

/* What a part of the time bound comes from, and what lowers it. */
static const char *
costs_part_name(int part, gboolean explicit_mode)
{
    static const char *const hw[N_PARTS] = {
        "op times (lower the model's size or raise 'hardware.gpu.peak_flops')",
        "TP/DP collectives (link latencies and bandwidths)",
        "link latencies ('hardware.*.latency')",
        "transfers at the slowest link's bandwidth ('hardware.*.bandwidth')",
        "optimizer steps ('hardware.host.adam_rate')",
    };
    static const char *const ex[N_PARTS] = {
        "op times ('costs.forward', 'costs.backward_input', ...)", "", "'costs.p2p' latencies", "",
        "'costs.optimizer'"};
    return explicit_mode ? ex[part] : hw[part];
}

/* An upper bound, in double, on an iteration's time and memory, checked against
 * PPSIM_COST_MAX: every op of every microbatch, collective and transfer one after another
 * (transfers at the slowest link's speed, a saturated bottleneck delivering at least that),
 * and every activation of every microbatch resident at once. A run within both cannot
 * overflow the engine's int64 picoseconds or bytes, which are sums of these terms. */
static gboolean
costs_check_limits(const PpsimCosts *c, const PpsimScenario *sc, GError **error)
{
    double m = sc->training.microbatches, bw = 0, lat = (double)c->p2p_latency_ps;
    if (!c->explicit_mode)
        costs_slowest_path(sc, &bw, &lat);
    double adam = sc->hardware.host_adam_params_per_s;
    double part[N_PARTS] = {0}, mem = 0;
    for (int s = 0; s < c->n_stages; s++) {
        const PpsimStageCost *st = &c->stage[s];
        const PpsimStageEstimate *e = &st->est;
        double comm = 2.0 * st->tp_comm_f_ps + st->tp_comm_b_ps + 2.0 * st->zero_gather_ps;
        /* F, B and R include their collectives: counted apart */
        part[PART_OPS] +=
            m * ((double)e->f_ps + e->b_ps + e->w_ps + e->r_ps + 2.0 * e->off_ps - comm);
        part[PART_COLLECTIVES] += m * comm + st->dp_comm_ps + st->pg_ps;
        /* two activation transfers, an offload and its reload; three model-state moves */
        part[PART_LATENCY] += (4.0 * m + 3.0) * lat;
        if (bw > 0) /* gradients out and weights back take at most 4 bytes a parameter */
            part[PART_TRANSFERS] += (m * (2.0 * st->p2p_bytes + 2.0 * st->offload_bytes) +
                                     8.0 * st->params + st->dp_bytes + st->pg_bytes) /
                                    bw * PPSIM_PS_PER_S;
        part[PART_OPTIMIZER] += st->opt_ps;
        if (!c->explicit_mode && adam > 0) /* on one CPU worker */
            part[PART_OPTIMIZER] += st->params / adam * PPSIM_PS_PER_S;
        mem += 2.0 * st->static_mem + m * (3.0 * e->act + st->act_ckpt);
    }
    double time_ps = 0;
    int top = 0;
    for (int i = 0; i < N_PARTS; i++) {
        time_ps += part[i];
        if (!(part[i] <= part[top])) /* NaN counts as the largest */
            top = i;
    }
    const char *path = sc->path ? sc->path : "";
    double max = (double)PPSIM_COST_MAX;
    if (!(time_ps <= max)) {
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                    "%s: one iteration could last up to %.3g s (%d stages x %d microbatches), "
                    "more than the %.3g s (2^60 ps) a run can time; most of it: %s, %.3g s",
                    path, time_ps / PPSIM_PS_PER_S, c->n_stages, sc->training.microbatches,
                    max / PPSIM_PS_PER_S, costs_part_name(top, c->explicit_mode),
                    part[top] / PPSIM_PS_PER_S);
        return FALSE;
    }
    if (!(mem <= max)) {
        g_set_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE,
                    "%s: memory could reach %.3g %s (the weights of %d stages and the "
                    "activations of %d microbatches at once), more than the %.3g (2^60) a run "
                    "can count: lower %s or 'training.microbatches'",
                    path, mem / c->mem_scale, c->memory_unit, c->n_stages,
                    sc->training.microbatches, max / c->mem_scale,
                    c->explicit_mode ? "'costs.activation'" : "the model's size");
        return FALSE;
    }
    return TRUE;
}

PpsimCosts *
ppsim_costs_new(const PpsimScenario *scenario, int n_stages, GError **error)
{
    g_return_val_if_fail(n_stages > 0, NULL);
    g_autoptr(PpsimCosts) c = g_new0(PpsimCosts, 1);
    c->explicit_mode = scenario->costs.present;
    c->kernel_model = ppsim_kernels_active(scenario);
    c->n_stages = n_stages;
    c->stage = g_new0(PpsimStageCost, n_stages);
    c->est = g_new0(PpsimStageEstimate, n_stages);
    gboolean ok = c->explicit_mode ? costs_fill_explicit(c, scenario, error)
                                   : costs_fill_hardware(c, scenario, error);
    if (!ok || !costs_check_limits(c, scenario, error))
        return NULL;
    ppsim_cost_overlap_fill(c, scenario);
    for (int s = 0; s < n_stages; s++) {
        c->est[s] = c->stage[s].est;
        c->est[s].static_mem = c->stage[s].static_mem;
    }
    c->estimates.n_stages = n_stages;
    c->estimates.stage = c->est;
    c->estimates.comm_ps = c->p2p_latency_ps;
    if (!c->explicit_mode && scenario->hardware.nvlink_bytes_per_s > 0)
        c->estimates.comm_ps += ppsim_time_from_seconds((double)c->stage[0].p2p_bytes /
                                                        scenario->hardware.nvlink_bytes_per_s);
    ppsim_mem_fill_costs(c, scenario);
    c->estimates.mem_scale = c->mem_scale;
    c->estimates.memory_limit_set = scenario->memory_limit_set && c->memory_limit > 0;
    if (!c->explicit_mode) {
        PpsimHardware dev_hw;
        ppsim_par_device_hardware(scenario, &dev_hw);
        const PpsimHardware *hw = &dev_hw;
        int p = scenario->training.pp;
        c->host_link = g_new(int, p);
        for (int d = 0; d < p; d++) /* device d runs on GPU d, as the replay places it */
            c->host_link[d] =
                ppsim_pcie_switch_index(hw->gpus_per_node, hw->pcie_gpus_per_switch, d);
        c->estimates.n_devices = p;
        c->estimates.host_link = c->host_link;
        /* contended when the switch's GPUs at full link speed exceed what its uplink
         * delivers while shared (DGX A100: 2 x 25 GB/s > 30 GB/s) */
        c->estimates.host_link_contended =
            hw->pcie_gpus_per_switch > 1 &&
            ppsim_pcie_uplink_bytes_per_s(hw) * ppsim_pcie_shared_efficiency(hw) <
                hw->pcie_gpus_per_switch * hw->pcie_bytes_per_s;
    }
    return g_steal_pointer(&c);
}

void
ppsim_costs_free(PpsimCosts *costs)
{
    if (costs == NULL)
        return;
    g_free(costs->stage);
    g_free(costs->est);
    g_free(costs->host_link);
    g_free(costs);
}
