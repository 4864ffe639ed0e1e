/* check-parallel.c: 3D parallelism and Llama-style layers against hand counts and the
 * papers' own numbers: one Llama-70B-class layer (parameters, FLOPs, activation bytes with
 * tp and sequence parallelism), the published parameter counts of the model presets, [KOR]
 * Eq. (2)/(3), [ZERO]'s Figure 1 example for ZeRO 0-3, ring collective costs, and the replay
 * (tp = dp = 1 reproduces the plain cost path; the DP reduction follows each stage's last
 * backward; MFU). */
#include "ppsim-test.h"
#include "cost/parallel.h"
#include "cost/kernels.h"
#include "cost/gemm.h"
#include "cost/memory.h"
#include "report/report.h"
#include "util/ppsim-error.h"

#include <math.h>
#include <string.h>

static PpsimScenario *
parse(const char *yaml, const char *const *overrides, GError **error)
{
    return ppsim_scenario_parse(yaml, strlen(yaml), "t.yaml", ".", overrides, error);
}

/* @yaml with @overrides, parsed into *@sc, and its costs for @p devices (no error either). */
static PpsimCosts *
costs_of(const char *yaml, const char *const *overrides, int p, PpsimScenario **sc)
{
    g_autoptr(GError) error = NULL;
    *sc = parse(yaml, overrides, &error);
    ppsim_assert_no_error(error);
    PpsimCosts *c = ppsim_costs_new(*sc, p, &error);
    ppsim_assert_no_error(error);
    return c;
}

/* costs_of on one device with the overrides of @o that are not NULL (at most 4). */
static PpsimCosts *
costs_with(const char *yaml, const char *const o[4], PpsimScenario **sc)
{
    const char *set[5] = {NULL};
    for (int i = 0, n = 0; i < 4; i++)
        if (o[i] != NULL)
            set[n++] = o[i];
    return costs_of(yaml, set, 1, sc);
}

/* One device's costs without and with one more override: @a with @o, @b with @o[@slot] set
 * to @value too (the scenarios in @sa, @sb). */
typedef struct {
    PpsimScenario *sa, *sb;
    PpsimCosts *ca, *cb;
    const PpsimStageCost *a, *b;
} Toggle;

static void
toggle_clear(Toggle *t)
{
    g_clear_pointer(&t->ca, ppsim_costs_free);
    g_clear_pointer(&t->cb, ppsim_costs_free);
    g_clear_pointer(&t->sa, ppsim_scenario_free);
    g_clear_pointer(&t->sb, ppsim_scenario_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Toggle, toggle_clear)

static void
toggle_run(Toggle *t, const char *yaml, const char *o[4], int slot, const char *value)
{
    t->ca = costs_with(yaml, o, &t->sa);
    o[slot] = value;
    t->cb = costs_with(yaml, o, &t->sb);
    t->a = &t->ca->stage[0];
    t->b = &t->cb->stage[0];
}

static PpsimModel
llama70b_layer(void)
{
    PpsimModel m = {.mlp = PPSIM_MLP_SWIGLU,
                    .layers = 80,
                    .hidden = 8192,
                    .ffn_hidden = 28672,
                    .heads = 64,
                    .kv_heads = 8,
                    .seq_len = 4096,
                    .vocab = 128256,
                    .flash_attention = TRUE};
    return m;
}

/* One Llama-70B-class layer, counted by hand tensor by tensor. */
START_TEST(test_llama70b_layer)
{
    PpsimModel m = llama70b_layer();
    /* Wq 8192x8192, Wk and Wv 8192x1024 (8 KV heads of 128), Wo 8192x8192, gate/up/down
     * 8192x28672 each, two RMSNorm vectors of 8192; no biases */
    double qkv = 8192.0 * 8192 + 2 * 8192.0 * 1024, wo = 8192.0 * 8192, mlp = 3 * 8192.0 * 28672,
           norms = 2 * 8192.0;
    ck_assert_double_eq(qkv + wo + mlp + norms, 855654400.0);
    ck_assert_double_eq(ppsim_par_layer_params(&m), 855654400.0);
    /* forward FLOPs, b = 1, s = 4096: 2 FLOPs per weight per token for every matrix, plus
     * QK^T and attention x V, 2 s^2 h each (full s^2 as [NAR21] counts) */
    double gemm = 2.0 * 4096 * (qkv + wo + mlp);
    double attn = 2 * 2.0 * 4096 * 4096 * 8192;
    ck_assert_double_eq(gemm, 7009386627072.0);
    ck_assert_double_eq(ppsim_par_layer_gemm_flops(&m, 1), gemm);
    ck_assert_double_eq(ppsim_par_layer_gemm_flops(&m, 1) + attn, 7559142440960.0);
    /* activations per GPU, tp = 8, bf16, FlashAttention: replicated without SP are the QKV
     * input (2sbh), the MLP input (2sbh) and the two norm inputs (4sbh); split 8 ways are
     * Q (2sbh), K and V (2 x 2sbh/8), the projection input (2sbh), gate and up outputs and
     * the down input (3 x 2sbf) */
    double sbh = 4096.0 * 8192, sbf = 4096.0 * 28672;
    double rep = 8 * sbh, split = 2 * sbh + 2 * 2 * sbh / 8 + 2 * sbh + 3 * 2 * sbf;
    ck_assert_double_eq(rep + split / 8, 375390208.0);
    ck_assert_double_eq(ppsim_par_layer_act_bytes(&m, 1, 8, FALSE), rep + split / 8);
    ck_assert_double_eq(ppsim_par_layer_act_bytes(&m, 1, 8, TRUE), (rep + split) / 8);
    ck_assert_double_eq((rep + split) / 8, 140509184.0);
    /* full recompute keeps the layer input: 2sbh, split with SP */
    m.recompute = PPSIM_RECOMPUTE_FULL;
    ck_assert_double_eq(ppsim_par_layer_act_bytes(&m, 1, 8, TRUE), 2 * sbh / 8);
}
END_TEST

/* [KOR] Eq. (2): sbh(10 + 24/t + 5as/(ht)) without SP; Eq. (3): sbh/t (34 + 5as/h) with SP,
 * for a GPT layer (g = a, f = 4h) storing the attention scores. */
START_TEST(test_kor_equations)
{
    PpsimModel m = {.mlp = PPSIM_MLP_GELU,
                    .hidden = 12288,
                    .ffn_hidden = 4 * 12288,
                    .heads = 96,
                    .kv_heads = 96,
                    .seq_len = 2048,
                    .flash_attention = FALSE};
    double s = 2048, b = 1, h = 12288, a = 96;
    for (int t = 1; t <= 8; t *= 2) {
        double eq2 = s * b * h * (10 + 24.0 / t + 5 * a * s / (h * t));
        double eq3 = s * b * h / t * (34 + 5 * a * s / h);
        ck_assert_double_eq_tol(ppsim_par_layer_act_bytes(&m, 1, t, FALSE), eq2, 1e-3);
        ck_assert_double_eq_tol(ppsim_par_layer_act_bytes(&m, 1, t, TRUE), eq3, 1e-3);
    }
}
END_TEST

/* Published parameter counts of the released checkpoints (Hugging Face model cards /
 * safetensors totals): Llama-2-7b 6,738,415,616; Llama-2-13b 13,015,864,320; Llama-2-70b
 * 68,976,648,192; Meta-Llama-3-8B 8,030,261,248; Meta-Llama-3-70B 70,553,706,496. */
START_TEST(test_model_presets)
{
    struct {
        const char *name;
        double params;
    } want[] = {{"llama2-7b", 6738415616.0},
                {"llama2-13b", 13015864320.0},
                {"llama2-70b", 68976648192.0},
                {"llama3-8b", 8030261248.0},
                {"llama3-70b", 70553706496.0}};
    for (guint i = 0; i < G_N_ELEMENTS(want); i++) {
        const PpsimModelPreset *p = ppsim_model_preset_lookup(want[i].name);
        ck_assert_ptr_nonnull(p);
        ck_assert_double_eq(ppsim_par_model_params(&p->model), want[i].params);
    }
    /* GPT-3 "175B" ([GPT3] Table 2.1): 12 L h^2 dominates; within 0.5% */
    const PpsimModelPreset *g = ppsim_model_preset_lookup("gpt3-175b");
    ck_assert_double_eq_tol(ppsim_par_model_params(&g->model), 175e9, 175e9 * 0.005);
    /* 405B: within 0.5% of the name */
    const PpsimModelPreset *l = ppsim_model_preset_lookup("llama3-405b");
    ck_assert_double_eq_tol(ppsim_par_model_params(&l->model), 405e9, 405e9 * 0.005);
    /* Nemotron-4: [NT4-15B] 3.2B embedding + 12.5B other parameters, [NT4-340B] 9.4B +
     * 331.6B; within the rounding of the papers' tenths */
    const PpsimModelPreset *n15 = ppsim_model_preset_lookup("nemotron4-15b");
    const PpsimModelPreset *n340 = ppsim_model_preset_lookup("nemotron4-340b");
    ck_assert_double_eq_tol(ppsim_par_model_params(&n15->model), 15.7e9, 0.1e9);
    ck_assert_double_eq_tol(ppsim_par_model_params(&n340->model), 341.0e9, 0.1e9);
    /* a preset's layer flags hold until the scenario writes its own */
    g_autoptr(GError) error = NULL;
    const char *nt = "hardware: {preset: dgx-h100-80gb}\n"
                     "model: {preset: nemotron4-15b}\n"
                     "training: {pp: 2, microbatches: 4}\n";
    g_autoptr(PpsimScenario) sc = parse(nt, NULL, &error);
    ppsim_assert_no_error(error);
    ck_assert(!ppsim_model_dropout(&sc->model));
    ck_assert(ppsim_model_rotary(&sc->model));
    const char *const drop[] = {"model.dropout=true", NULL};
    g_autoptr(PpsimScenario) sc2 = parse(nt, drop, &error);
    ppsim_assert_no_error(error);
    ck_assert(ppsim_model_dropout(&sc2->model));
    /* the other presets keep their family's default: GPT-3 has dropout, no rotary */
    const char *g3 = "model: {preset: gpt3-175b}\ntraining: {pp: 2, microbatches: 4}\n";
    g_autoptr(PpsimScenario) sc3 = parse(g3, NULL, &error);
    ppsim_assert_no_error(error);
    ck_assert(ppsim_model_dropout(&sc3->model));
    ck_assert(!ppsim_model_rotary(&sc3->model));
}
END_TEST

/* [ZERO] Figure 1: Ψ = 7.5B, Nd = 64, K = 12: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB per device
 * (GB = 1e9 bytes, as the paper rounds). */
START_TEST(test_zero_stages)
{
    double psi = 7.5e9;
    double want[4] = {120e9, 31.4e9, 16.6e9, 1.875e9};
    for (int z = 0; z <= 3; z++)
        ck_assert_double_eq_tol(ppsim_zero_static_bytes(psi, 16, z, 64), want[z], 0.06e9);
    /* the formulas of §5 exactly: (2+2+K)Ψ, 2Ψ+2Ψ+KΨ/Nd, 2Ψ+(2+K)Ψ/Nd, (2+2+K)Ψ/Nd */
    ck_assert_double_eq(ppsim_zero_static_bytes(psi, 16, 1, 64), 4 * psi + 12 * psi / 64);
    ck_assert_double_eq(ppsim_zero_static_bytes(psi, 16, 2, 64), 2 * psi + 14 * psi / 64);
    ck_assert_double_eq(ppsim_zero_static_bytes(psi, 16, 3, 64), 16 * psi / 64);
    /* dp = 1: every stage stores everything */
    for (int z = 0; z <= 3; z++)
        ck_assert_double_eq(ppsim_zero_static_bytes(psi, 16, z, 1), 16 * psi);
}
END_TEST

START_TEST(test_ring_costs)
{
    /* 1 GB over 8 ranks at 100 GB/s: 2 x 7/8 x 10 ms = 17.5 ms, plus 14 steps of latency */
    ck_assert_int_eq(ppsim_ring_allreduce_ps(1e9, 8, 100e9, 0), 17500 * PPSIM_PS_PER_US);
    ck_assert_int_eq(ppsim_ring_allreduce_ps(1e9, 8, 100e9, 1000), 17500 * PPSIM_PS_PER_US + 14000);
    ck_assert_int_eq(ppsim_ring_gather_ps(1e9, 8, 100e9, 0), 8750 * PPSIM_PS_PER_US);
    ck_assert_int_eq(ppsim_ring_allreduce_ps(1e9, 1, 100e9, 1000), 0);
}
END_TEST

static const char *gpt_yaml = "hardware: {preset: dgx-a100-80gb}\n"
                              "model: {layers: 16, hidden: 4096, heads: 32, seq_len: 4096}\n"
                              "training: {pp: 4, microbatches: 8}\n"
                              "schedule: [1f1b, zb-h1]\n";

/* parallel: {tp: 1, dp: 1} goes through parallel.c and must give the plain path's costs. */
START_TEST(test_tp1_matches_plain)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) plain = parse(gpt_yaml, NULL, &error);
    ppsim_assert_no_error(error);
    const char *const ov[] = {"parallel.tp=1", "parallel.dp=1", NULL};
    g_autoptr(PpsimScenario) par = parse(gpt_yaml, ov, &error);
    ppsim_assert_no_error(error);
    ck_assert(par->parallel.present);
    g_autoptr(PpsimCosts) a = ppsim_costs_new(plain, 4, &error);
    g_autoptr(PpsimCosts) b = ppsim_costs_new(par, 4, &error);
    ppsim_assert_no_error(error);
    for (int s = 0; s < 4; s++) {
        const PpsimStageCost *x = &a->stage[s], *y = &b->stage[s];
        ck_assert_int_le(llabs(x->est.f_ps - y->est.f_ps), 1);
        ck_assert_int_le(llabs(x->est.b_ps - y->est.b_ps), 1);
        ck_assert_int_le(llabs(x->est.w_ps - y->est.w_ps), 1);
        ck_assert_int_le(llabs(x->est.act - y->est.act), 1);
        ck_assert_int_le(llabs(x->est.act_w - y->est.act_w), 1);
        ck_assert_int_eq(x->static_mem, y->static_mem);
        ck_assert_int_eq(x->p2p_bytes, y->p2p_bytes);
        ck_assert_int_eq(y->tp_comm_f_ps + y->tp_comm_b_ps + y->dp_comm_ps, 0);
    }
    g_autoptr(PpsimRunResult) ra = ppsim_sim_run_spec(plain, plain->schedules->pdata[1], 0, &error);
    g_autoptr(PpsimRunResult) rb = ppsim_sim_run_spec(par, par->schedules->pdata[1], 0, &error);
    ppsim_assert_no_error(error);
    ck_assert_int_le(llabs(ra->makespan_ps - rb->makespan_ps), 64);
}
END_TEST

/* tp = 2 inside a node: compute halves, two all-reduces of 2sbh per layer join F and B,
 * over NVLink; activations and static memory follow [KOR] and the tp split. */
START_TEST(test_tp2_stage)
{
    g_autoptr(GError) error = NULL;
    const char *const ov[] = {"parallel.tp=2", "parallel.pp=4", NULL};
    /* the closed-form path (hardware.gpu.efficiency set): ring collectives at line rate */
    const char *yaml = "hardware: {preset: dgx-a100-80gb, gpu: {efficiency: 0.6}}\n"
                       "model: {layers: 16, hidden: 4096, heads: 32, seq_len: 4096}\n"
                       "training: {microbatches: 8}\n";
    g_autoptr(PpsimScenario) sc = parse(yaml, ov, &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(sc->training.pp, 4);
    ck_assert_int_eq(sc->hardware.nodes, 1);
    g_autoptr(PpsimCosts) c = ppsim_costs_new(sc, 4, &error);
    ppsim_assert_no_error(error);
    const PpsimHardware *hw = &sc->hardware;
    double s = 4096, h = 4096, L = 4; /* layers per stage */
    double fwd = L * (24 * s * h * h + 4 * s * s * h);
    PpsimTime ar = ppsim_time_from_seconds(2 * 0.5 * 2 * s * h / hw->nvlink_bytes_per_s) +
                   2 * hw->nvlink_latency_ps;
    const PpsimStageCost *st = &c->stage[1]; /* a middle stage: layers only */
    /* (each collective is rounded to whole picoseconds once per half: 2 ps each at most) */
    ck_assert_int_le(llabs(st->tp_comm_f_ps - 2 * 4 * ar), 16);
    PpsimTime f = ppsim_time_from_seconds(fwd / 2 / (hw->gpu_peak_flops * hw->gpu_efficiency));
    ck_assert_int_le(llabs(st->est.f_ps - (f + 2 * 4 * ar)), 16);
    /* [KOR] Eq. (2) with FlashAttention: sbh(10 + 24/2) per layer */
    ck_assert_int_eq(st->est.act, (gint64)llround(L * s * h * 22));
    /* 18 bytes per parameter (fp32 main gradients, [MEGDO]), half the layer's weights per
     * GPU */
    double params = L * (12 * h * h + 13 * h) / 2;
    ck_assert_int_eq(st->static_mem, (gint64)llround(params * 18));
    ck_assert_int_eq(st->p2p_bytes, (guint64)(2 * s * h / 2));
}
END_TEST

START_TEST(test_split_and_batch)
{
    g_autoptr(GError) error = NULL;
    const char *yaml = "hardware: {preset: dgx-h100-80gb, nodes: 2}\n"
                       "model: {layers: 18, hidden: 1024, heads: 8, seq_len: 1024}\n"
                       "parallel: {tp: 2, pp: 4, dp: 2}\n"
                       "training: {global_batch: 48, microbatch_size: 2}\n";
    g_autoptr(PpsimScenario) sc = parse(yaml, NULL, &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(sc->training.microbatches, 12); /* 48 / (2 x 2) */
    /* 18 layers over 4 stages: as even as they allow (4, 5, 4, 5), as without `parallel:` */
    g_autoptr(PpsimCosts) c = ppsim_costs_new(sc, 4, &error);
    ppsim_assert_no_error(error);
    const int want[] = {4, 5, 4, 5};
    for (int s = 0; s < 4; s++)
        ck_assert_int_eq(c->stage[s].layers, want[s]);
    const char *plain = "hardware: {preset: dgx-h100-80gb, nodes: 2}\n"
                        "model: {layers: 18, hidden: 1024, heads: 8, seq_len: 1024}\n"
                        "training: {pp: 4, microbatches: 12, microbatch_size: 2}\n";
    g_autoptr(PpsimScenario) sc0 = parse(plain, NULL, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimCosts) c0 = ppsim_costs_new(sc0, 4, &error);
    ppsim_assert_no_error(error);
    for (int s = 0; s < 4; s++)
        ck_assert_int_eq(c0->stage[s].layers, c->stage[s].layers);
    const char *const ov[] = {"model.stage_layers=[4,5,5,4]", NULL};
    g_autoptr(PpsimScenario) sc2 = parse(yaml, ov, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimCosts) c2 = ppsim_costs_new(sc2, 4, &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(c2->stage[1].layers, 5);
}
END_TEST

/* dp = 2 with the replicas on other nodes: each stage's reduction (2 bytes per parameter
 * of the GPU's share, a ring all-reduce's bytes as flows over the GPU's NIC) starts after
 * the stage's last W; the
 * part past the pipeline's last compute op is exposed and lengthens the iteration. */
START_TEST(test_dp_reduction)
{
    g_autoptr(GError) error = NULL;
    /* the closed-form path: one ring over the NICs at line rate, after the last W */
    const char *yaml = "hardware: {preset: dgx-h100-80gb, nodes: 2, gpu: {efficiency: 0.43}}\n"
                       "model: {preset: llama3-8b, seq_len: 2048}\n"
                       "parallel: {tp: 2, pp: 4, dp: 2, zero: 1, placement: tp-pp-dp}\n"
                       "training: {microbatches: 8}\n"
                       "schedule: [1f1b, zb-h1]\n";
    g_autoptr(PpsimScenario) sc = parse(yaml, NULL, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimCosts) c = ppsim_costs_new(sc, 4, &error);
    ppsim_assert_no_error(error);
    const PpsimHardware *hw = &sc->hardware;
    /* under tp-pp-dp the dp peers are tp x pp = 8 GPUs apart: the other node, so the NICs */
    PpsimTime want = ppsim_ring_allreduce_ps(2 * c->stage[1].params, 2, hw->network_bytes_per_s,
                                             hw->network_latency_ps);
    ck_assert_int_eq(c->stage[1].dp_comm_ps, want);
    ck_assert_int_gt(want, 0);
    for (guint k = 0; k < 2; k++) {
        g_autoptr(PpsimRunResult) res = ppsim_sim_run_spec(sc, sc->schedules->pdata[k], 0, &error);
        ppsim_assert_no_error(error);
        PpsimTime compute_end = 0, exposed = 0;
        for (int d = 0; d < 4; d++) {
            GArray *t = res->compute_timing[d];
            compute_end = MAX(compute_end, g_array_index(t, PpsimOpTiming, t->len - 1).end_ps);
        }
        for (int d = 0; d < 4; d++) {
            const PpsimDeviceResult *dev = &res->devices[d];
            /* a flow of the ring's bytes over the GPU's NIC: at least the bandwidth term of
             * the ring formula, more only while it shares the NIC with pipeline sends */
            PpsimTime bw_term = c->stage[d].dp_comm_ps - 2 * hw->network_latency_ps;
            ck_assert_int_ge(dev->dp_comm_ps, bw_term);
            ck_assert_int_le(dev->dp_comm_ps, bw_term * 3 / 2);
            ck_assert_int_le(dev->dp_exposed_ps, dev->dp_comm_ps);
            ck_assert_int_le(dev->end_ps, res->makespan_ps);
            exposed = MAX(exposed, dev->dp_exposed_ps);
        }
        /* the iteration is the compute plus the reductions that did not hide */
        ck_assert_int_gt(exposed, 0);
        ck_assert_int_eq(res->makespan_ps, compute_end + exposed);
        /* in 1F1B device 0 runs the pipeline's last op: its reduction cannot hide, while
         * the last device's (done first) hides behind the cool-down of the others */
        if (k == 0) {
            ck_assert_int_eq(res->devices[0].dp_exposed_ps, res->devices[0].dp_comm_ps);
            ck_assert_int_lt(res->devices[3].dp_exposed_ps, res->devices[3].dp_comm_ps);
        }
        /* MFU: 3 x forward FLOPs x m x dp over makespan x peak x 16 GPUs */
        double fwd = 0;
        for (int s = 0; s < 4; s++)
            fwd += c->stage[s].fwd_flops;
        double mfu =
            3 * fwd * 8 * 2 / ((double)res->makespan_ps / PPSIM_PS_PER_S * hw->gpu_peak_flops * 16);
        ck_assert_double_eq_tol(res->mfu, mfu, 1e-12);
        ck_assert(res->mfu > 0 && res->mfu < hw->gpu_efficiency);
    }
}
END_TEST

/* Without overlap_grad_reduce Megatron reduces every chunk's gradients after the whole
 * forward-backward: in an interleaved schedule no chunk's reduction starts before the
 * device's last gradient op, so device 0 (which runs the pipeline's last op) hides none of
 * its two reductions. (Each reduction starting after its own chunk's last op would hide the
 * later chunk's behind device 0's remaining backwards.) */
START_TEST(test_dp_reduction_after_all_chunks)
{
    g_autoptr(GError) error = NULL;
    const char *yaml = "hardware: {preset: dgx-h100-80gb, nodes: 2}\n"
                       "model: {preset: llama3-8b, seq_len: 2048}\n"
                       "parallel: {tp: 2, pp: 4, dp: 2, zero: 1, overlap_grad_reduce: false}\n"
                       "training: {microbatches: 8, chunks: 2}\n"
                       "schedule: [interleaved]\n";
    g_autoptr(PpsimScenario) sc = parse(yaml, NULL, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimRunResult) res = ppsim_sim_run_spec(sc, sc->schedules->pdata[0], 0, &error);
    ppsim_assert_no_error(error);
    const PpsimDeviceResult *d0 = &res->devices[0];
    ck_assert_int_gt(d0->dp_comm_ps, 0);
    ck_assert_int_eq(d0->dp_exposed_ps, d0->dp_comm_ps);
}
END_TEST

/* tp = 8, pp = 2, dp = 2 on 4 nodes: the pipeline boundary and the DP ring both cross
 * device 1's NIC. In 1F1B its reduction starts when its last backward ends, which is also
 * when that backward's gradient leaves for device 0 over the same NIC: the two share it, so
 * the reduction takes longer than its bytes alone would. */
START_TEST(test_dp_contention)
{
    g_autoptr(GError) error = NULL;
    const char *yaml = "hardware: {preset: dgx-h100-80gb, nodes: 4}\n"
                       "model: {preset: llama3-8b, seq_len: 8192}\n"
                       "parallel: {tp: 8, pp: 2, dp: 2}\n"
                       "training: {microbatches: 4}\n"
                       "schedule: 1f1b\n";
    g_autoptr(PpsimScenario) sc = parse(yaml, NULL, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimCosts) c = ppsim_costs_new(sc, 2, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimRunResult) res = ppsim_sim_run_spec(sc, sc->schedules->pdata[0], 0, &error);
    ppsim_assert_no_error(error);
    const PpsimHardware *hw = &sc->hardware;
    double nic = MIN(hw->network_bytes_per_s, hw->pcie_bytes_per_s);
    PpsimTime alone = ppsim_time_from_seconds((double)c->stage[1].dp_bytes / nic);
    PpsimTime p2p = ppsim_time_from_seconds((double)c->stage[1].p2p_bytes / nic);
    ck_assert_int_gt(p2p, 0);
    /* sharing for the p2p's duration costs up to that duration more, and some of it */
    ck_assert_int_gt(res->devices[1].dp_comm_ps, alone + p2p / 2);
    ck_assert_int_le(res->devices[1].dp_comm_ps, alone + p2p + hw->network_latency_ps * 2);
}
END_TEST

/* Where the collectives run: a TP group wider than a node rings over the NICs; with
 * placement tp-dp-pp the dp peers share a node (NVLink) and each pipeline device gets a node
 * of its own, so a PP boundary crosses nodes. */
START_TEST(test_placement_links)
{
    g_autoptr(GError) error = NULL;
    /* the closed-form path: ring collectives at line rate */
    const char *yaml = "hardware: {preset: dgx-h100-80gb, nodes: 4, gpu: {efficiency: 0.43}}\n"
                       "model: {preset: gpt3-175b}\n"
                       "parallel: {tp: 16, pp: 2, dp: 1}\n"
                       "training: {microbatches: 4}\n";
    g_autoptr(PpsimScenario) sc = parse(yaml, NULL, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimCosts) c = ppsim_costs_new(sc, 2, &error);
    ppsim_assert_no_error(error);
    const PpsimHardware *hw = &sc->hardware;
    double act = 2.0 * 2048 * 12288; /* 2sbh bytes, b = 1 */
    PpsimTime ar =
        ppsim_ring_allreduce_ps(act, 16, hw->network_bytes_per_s, hw->network_latency_ps);
    ck_assert_int_eq(c->stage[1].tp_comm_f_ps, 2 * 48 * ar); /* 48 layers, 2 per layer */
    PpsimHardware dev;
    ppsim_par_device_hardware(sc, &dev);
    ck_assert_int_eq(dev.gpus_per_node, 1);

    const char *const ov[] = {"parallel.tp=4", "parallel.dp=2", "parallel.pp=4",
                              "parallel.placement=tp-dp-pp", NULL};
    g_autoptr(PpsimScenario) sc2 = parse(yaml, ov, &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(ppsim_par_pp_stride(sc2), 8);
    ck_assert_int_eq(ppsim_par_dp_stride(sc2), 4);
    ck_assert(!ppsim_par_dp_across_nodes(sc2));
    g_autoptr(PpsimCosts) c2 = ppsim_costs_new(sc2, 4, &error);
    ppsim_assert_no_error(error);
    double params_gpu = c2->stage[1].params;
    ck_assert_int_eq(
        c2->stage[1].dp_comm_ps,
        ppsim_ring_allreduce_ps(2 * params_gpu, 2, hw->nvlink_bytes_per_s, hw->nvlink_latency_ps));
    ppsim_par_device_hardware(sc2, &dev);
    ck_assert_int_eq(dev.gpus_per_node, 1); /* 8 GPUs per pipeline device: one per node */
    /* tp-pp-dp keeps a replica's stages adjacent and puts the dp peers tp x pp = 16 GPUs
     * apart: other nodes */
    const char *const ov3[] = {"parallel.tp=4", "parallel.dp=2", "parallel.pp=4",
                               "parallel.placement=tp-pp-dp", NULL};
    g_autoptr(PpsimScenario) sc3 = parse(yaml, ov3, &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(ppsim_par_pp_stride(sc3), 4);
    ck_assert_int_eq(ppsim_par_dp_stride(sc3), 16);
    ck_assert(ppsim_par_dp_across_nodes(sc3));
    ppsim_par_device_hardware(sc3, &dev);
    ck_assert_int_eq(dev.gpus_per_node, 2);
    /* unwritten, the placement is Megatron-LM's tp-dp-pp */
    const char *const ov4[] = {"parallel.tp=4", "parallel.dp=2", "parallel.pp=4", NULL};
    g_autoptr(PpsimScenario) sc4 = parse(yaml, ov4, &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(sc4->parallel.placement, PPSIM_PLACEMENT_TP_DP_PP);
    ck_assert_int_eq(ppsim_par_pp_stride(sc4), 8);
    ck_assert_int_eq(ppsim_par_dp_stride(sc4), 4);
}
END_TEST

/* ZeRO-3: the stage's weights are all-gathered before each F and each B; static memory is
 * (2+2+K)Ψ/Nd, plus two units gathered whole (here a middle stage's layer: 2 bytes a
 * parameter of each). */
START_TEST(test_zero3)
{
    g_autoptr(GError) error = NULL;
    const char *yaml = "hardware: {preset: dgx-h100-80gb, nodes: 2}\n"
                       "model: {preset: llama3-8b, seq_len: 2048}\n"
                       "parallel: {tp: 2, pp: 4, dp: 2, zero: 3}\n"
                       "training: {microbatches: 8}\n";
    g_autoptr(PpsimScenario) sc = parse(yaml, NULL, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimCosts) c = ppsim_costs_new(sc, 4, &error);
    ppsim_assert_no_error(error);
    const PpsimStageCost *st = &c->stage[2];
    ck_assert_double_eq_tol(st->unit_params, ppsim_par_layer_params(&sc->model) / 2, 1e-6);
    ck_assert_int_eq(st->static_mem, /* fp32 grads */
                     (gint64)llround(st->params * 18 / 2 + 2 * 2 * st->unit_params));
    ck_assert_int_gt(st->zero_gather_ps, 0);
    ck_assert_int_eq(st->est.f_ps - st->est.r_ps, st->zero_gather_ps);
}
END_TEST

/* ZeRO-3 over a group with 8 members a node (tp = pp = 1, dp = 32 on 4 nodes): the gather
 * is a ring over the node's NVLink plus one across the 4 nodes at 1/8 of the bytes a NIC
 * (NCCL's rings, one per NIC, enter a node once each), and the flows carry the NIC's 1/8
 * share; with one member a node (tp = 8) it stays one ring over the NICs. */
START_TEST(test_zero3_across_nodes)
{
    g_autoptr(GError) error = NULL;
    const char *yaml = "hardware: {preset: dgx-h100-80gb, nodes: 4}\n"
                       "model: {preset: llama3-8b, seq_len: 2048}\n"
                       "parallel: {tp: 1, pp: 1, dp: 32, zero: 3}\n"
                       "training: {microbatches: 1}\n";
    const char *const one[] = {"parallel.tp=8", "parallel.dp=4", NULL};
    g_autoptr(PpsimScenario) sc = parse(yaml, NULL, &error);
    g_autoptr(PpsimScenario) wide = parse(yaml, one, &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(ppsim_par_dp_local(sc), 8);
    ck_assert_int_eq(ppsim_par_dp_local(wide), 1);
    g_autoptr(PpsimCosts) c = ppsim_costs_new(sc, 1, &error);
    g_autoptr(PpsimCosts) w = ppsim_costs_new(wide, 1, &error);
    ppsim_assert_no_error(error);
    const PpsimHardware *hw = &sc->hardware;
    const PpsimStageCost *st = &c->stage[0];
    double bytes = 2.0 * st->params; /* bf16 weights of the GPU's stage */
    PpsimTime want =
        ppsim_ring_gather_ps(bytes, 8, hw->nvlink_bytes_per_s, hw->nvlink_latency_ps) +
        ppsim_ring_gather_ps(bytes / 8, 4, hw->network_bytes_per_s, hw->network_latency_ps);
    ck_assert_int_eq(st->zero_gather_ps, want);
    ck_assert(fabs((double)st->zero_bytes - 31.0 / 32 * bytes / 8) <= 1);
    /* one member a node: the ring over the NICs, every byte through each GPU's NIC */
    const PpsimStageCost *sw = &w->stage[0];
    double wb = 2.0 * sw->params;
    ck_assert_int_eq(sw->zero_gather_ps,
                     ppsim_ring_gather_ps(wb, 4, hw->network_bytes_per_s, hw->network_latency_ps));
    ck_assert(fabs((double)sw->zero_bytes - 3.0 / 4 * wb) <= 1);
}
END_TEST

/* ZeRO-3's gathers in hardware mode are flows before each F and B: the op's own duration
 * leaves the gather out, each gather moves at most the NIC's rate, they queue on their own
 * stream, and prefetching one op ahead hides part of them behind compute. */
START_TEST(test_zero3_gathers_are_flows)
{
    g_autoptr(GError) error = NULL;
    const char *yaml = "hardware: {preset: dgx-h100-80gb, nodes: 2}\n"
                       "model: {preset: llama3-8b, seq_len: 2048}\n"
                       "parallel: {tp: 2, pp: 4, dp: 2, zero: 3, placement: tp-pp-dp}\n"
                       "training: {microbatches: 8}\n"
                       "schedule: 1f1b\n";
    const char *const zero1[] = {"parallel.zero=1", NULL};
    g_autoptr(PpsimScenario) sc = parse(yaml, NULL, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimScenario) sc1 = parse(yaml, zero1, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimCosts) c = ppsim_costs_new(sc, 4, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimRunResult) res = ppsim_sim_run_spec(sc, sc->schedules->pdata[0], 0, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimRunResult) res1 = ppsim_sim_run_spec(sc1, sc1->schedules->pdata[0], 0, &error);
    ppsim_assert_no_error(error);
    /* device 0's first op is an F with nothing to share its GPU: compute and TP only */
    const PpsimOpTiming *f0 = &g_array_index(res->compute_timing[0], PpsimOpTiming, 0);
    ck_assert_int_eq(f0->end_ps - f0->start_ps, c->stage[0].est.f_ps - c->stage[0].zero_gather_ps);
    ck_assert_int_gt(f0->start_ps, 0); /* it waited for its gather */
    PpsimTime most = 0;
    for (int d = 0; d < 4; d++) {
        /* 16 gathers (8 F, 8 B), each of dp_bytes over the NIC at best */
        double bw_term = (double)c->stage[d].dp_bytes / sc->hardware.network_bytes_per_s *
                         (double)PPSIM_PS_PER_S;
        PpsimTime gathers = res->devices[d].zero_gather_ps;
        ck_assert(gathers >= 16 * bw_term);
        ck_assert_int_le(gathers, res->makespan_ps); /* one at a time on its stream */
        most = MAX(most, gathers);
    }
    /* same compute as ZeRO-1 (whose DP reduction moves twice the bytes): the gathers cost
     * time, but less than if none of them hid */
    ck_assert_int_gt(res->makespan_ps, res1->makespan_ps);
    ck_assert_int_lt(res->makespan_ps - res1->makespan_ps, most);
}
END_TEST

/* FSDP gathers layer by layer: an op starts once its first layer's share of the weights has
 * arrived, computes each layer while the next one's share flows, and ends no sooner than
 * the last share plus one layer of compute. One stage of L = 32 layers, one microbatch, dp
 * 2 over the NICs: the forward waits for 1/L of a gather, not all of it; on a slow network
 * (gather-bound) the backward starts one layer's forward after the forward's gather ends. */
START_TEST(test_zero3_gathers_layer_by_layer)
{
    g_autoptr(GError) error = NULL;
    const char *yaml = "hardware: {preset: dgx-h100-80gb, nodes: 2}\n"
                       "model: {preset: llama3-8b, seq_len: 4096}\n"
                       "parallel: {tp: 8, pp: 1, dp: 2, zero: 3}\n"
                       "training: {microbatches: 1}\n"
                       "schedule: 1f1b\n";
    const char *const slow[] = {"hardware.network.bandwidth=2GB/s", NULL};
    for (int gather_bound = 0; gather_bound < 2; gather_bound++) {
        g_autoptr(PpsimScenario) sc = parse(yaml, gather_bound ? slow : NULL, &error);
        ppsim_assert_no_error(error);
        g_autoptr(PpsimCosts) c = ppsim_costs_new(sc, 1, &error);
        ppsim_assert_no_error(error);
        g_autoptr(PpsimRunResult) res = ppsim_sim_run_spec(sc, sc->schedules->pdata[0], 0, &error);
        ppsim_assert_no_error(error);
        const PpsimStageCost *st = &c->stage[0];
        ck_assert_int_eq(st->layers, 32);
        const PpsimOpTiming *f = &g_array_index(res->compute_timing[0], PpsimOpTiming, 0);
        const PpsimOpTiming *b = &g_array_index(res->compute_timing[0], PpsimOpTiming, 1);
        PpsimTime fwd = f->end_ps - f->start_ps;
        /* two gathers, one before F and one before B, each first byte to last */
        PpsimTime gather = res->devices[0].zero_gather_ps / 2;
        /* the first share: 1/32 of the bytes plus a transfer's latency (a second one for the
         * rest); at most 1/32 of the whole gather and two latencies */
        PpsimTime lat = sc->hardware.network_latency_ps + sc->hardware.pcie_latency_ps;
        ck_assert_int_gt(f->start_ps, 0);
        ck_assert_int_le(f->start_ps, gather / 32 + 2 * lat);
        if (!gather_bound) { /* the gather hides behind the forward: B follows F at once */
            ck_assert_int_lt(gather, fwd);
            ck_assert_int_eq(b->start_ps, f->end_ps);
            /* the reduce-scatter, per layer as each layer's backward ends: only what the
             * backward cannot cover shows, at least the last layer's */
            const char *const after[] = {"parallel.overlap_grad_reduce=false", NULL};
            g_autoptr(PpsimScenario) sc0 = parse(yaml, after, &error);
            ppsim_assert_no_error(error);
            g_autoptr(PpsimCosts) c0 = ppsim_costs_new(sc0, 1, &error);
            ppsim_assert_no_error(error);
            double red = (double)c0->stage[0].dp_comm_ps;
            double back = (double)(st->est.b_ps - st->zero_gather_ps + st->est.w_ps);
            ck_assert(fabs((double)st->dp_comm_ps - MAX(red / 32, red - back * 31 / 32)) <= 1);
            ck_assert_int_lt(st->dp_comm_ps, c0->stage[0].dp_comm_ps);
            continue;
        }
        /* gather-bound: F's gather ends at `gather` (its stream starts at 0), F one layer of
         * compute later; B's gather follows F's on the stream and B starts when its first
         * share has arrived, as F did after its own */
        ck_assert_int_gt(gather, 2 * fwd);
        ck_assert_int_gt(b->start_ps, f->end_ps);
        ck_assert_int_ge(b->start_ps, gather + fwd / 32);
        ck_assert(llabs(b->start_ps - (gather + f->start_ps)) <= 2);
        /* B is the last op: the gradient reduce-scatter waits for B's gather and B's last
         * layer too */
        ck_assert_int_ge(res->makespan_ps, 2 * gather + (b->end_ps - b->start_ps) / 32);
    }
}
END_TEST

/* parallel.overlap_param_gather (ZeRO 1-2): the DP all-reduce splits into its two halves of
 * equal bytes and time, the gradients' reduce-scatter after the backward and the updated
 * weights' all-gather before the next iteration's forward (in the closed form and the
 * kernel model alike). One stage of 32 layers, one microbatch, the reduction after the
 * backward: the forward starts once the first layer's share has arrived and the rest of the
 * gather hides behind it, so the step is shorter by the all-gather less that first share.
 * Without a distributed optimizer (ZeRO 0 or 3) the key changes nothing. */
START_TEST(test_param_gather_overlap)
{
    g_autoptr(GError) error = NULL;
    const char *yaml = "hardware: {preset: dgx-h100-80gb, nodes: 2}\n"
                       "model: {preset: llama3-8b, seq_len: 4096}\n"
                       "parallel: {tp: 8, pp: 1, dp: 2, zero: 1, overlap_grad_reduce: false}\n"
                       "training: {microbatches: 1}\n"
                       "schedule: 1f1b\n";
    for (int closed = 0; closed < 2; closed++) {
        const char *const off[] = {closed ? "hardware.gpu.efficiency=0.5" : NULL, NULL};
        const char *const on[] = {"parallel.overlap_param_gather=true",
                                  closed ? "hardware.gpu.efficiency=0.5" : NULL, NULL};
        g_autoptr(PpsimScenario) sc0 = NULL;
        g_autoptr(PpsimScenario) sc = NULL;
        g_autoptr(PpsimCosts) c0 = costs_of(yaml, off, 1, &sc0);
        g_autoptr(PpsimCosts) c = costs_of(yaml, on, 1, &sc);
        const PpsimStageCost *st0 = &c0->stage[0], *st = &c->stage[0];
        ck_assert_int_eq(st0->pg_ps, 0);
        ck_assert_int_eq(st0->pg_bytes, 0);
        ck_assert_int_gt(st->pg_ps, 0);
        ck_assert(llabs(st->pg_ps + st->dp_comm_ps - st0->dp_comm_ps) <= 1);
        ck_assert(llabs(st->pg_ps - st->dp_comm_ps) <= 1);
        ck_assert(llabs((gint64)(st->pg_bytes + st->dp_bytes) - (gint64)st0->dp_bytes) <= 1);
        ck_assert(llabs((gint64)st->pg_bytes - (gint64)st->dp_bytes) <= 1);
        /* F, B and W are the same ops */
        ck_assert_int_eq(st->est.f_ps, st0->est.f_ps);
        ck_assert_int_eq(st->est.b_ps + st->est.w_ps, st0->est.b_ps + st0->est.w_ps);
        if (closed)
            continue;
        g_autoptr(PpsimRunResult) r0 = ppsim_sim_run_spec(sc0, sc0->schedules->pdata[0], 0, &error);
        ppsim_assert_no_error(error);
        g_autoptr(PpsimRunResult) res = ppsim_sim_run_spec(sc, sc->schedules->pdata[0], 0, &error);
        ppsim_assert_no_error(error);
        const PpsimOpTiming *f = &g_array_index(res->compute_timing[0], PpsimOpTiming, 0);
        const PpsimOpTiming *b = &g_array_index(res->compute_timing[0], PpsimOpTiming, 1);
        const PpsimOpTiming *f0 = &g_array_index(r0->compute_timing[0], PpsimOpTiming, 0);
        PpsimTime gather = res->devices[0].zero_gather_ps, fwd = f->end_ps - f->start_ps;
        ck_assert_int_eq(r0->devices[0].zero_gather_ps, 0);
        ck_assert_int_eq(f0->start_ps, 0);
        ck_assert_int_eq(fwd, f0->end_ps - f0->start_ps);
        /* the first layer's share (and a second transfer's latency for the rest) */
        PpsimTime lat = sc->hardware.network_latency_ps + sc->hardware.pcie_latency_ps;
        ck_assert_int_gt(f->start_ps, 0);
        ck_assert_int_le(f->start_ps, gather / 32 + 2 * lat);
        /* the gather's bytes at no more than the link's rate, hidden behind the forward */
        ck_assert(gather >=
                  (double)st->pg_bytes / sc->hardware.network_bytes_per_s * (double)PPSIM_PS_PER_S);
        ck_assert_int_lt(gather, fwd);
        ck_assert_int_eq(b->start_ps, f->end_ps);
        /* only the reduce-scatter follows the backward: the step is shorter by the
         * all-gather, less the wait for its first share */
        PpsimTime saved = r0->devices[0].dp_comm_ps - res->devices[0].dp_comm_ps;
        ck_assert(llabs(saved - gather) <= 2 * lat);
        ck_assert(llabs((r0->makespan_ps - res->makespan_ps) - (saved - f->start_ps)) <= 2);
        /* the sampled replay does not model the gathers' flows: it says so */
        PpsimSampleOptions opt = {.samples = 4, .seed = 1, .threads = 1};
        ck_assert(!ppsim_sim_sample(sc, res, &opt, &error));
        ck_assert_msg(error != NULL && strstr(error->message, "overlap_param_gather") != NULL, "%s",
                      error ? error->message : "no error");
        g_clear_error(&error);
    }
    /* without ZeRO 1-2 there is no such all-gather (ZeRO-3 gathers before every op already):
     * the key changes nothing, so that a sweep or `ppsim search` over ZeRO levels may keep it */
    for (int zero = 0; zero <= 3; zero += 3) {
        g_autofree char *z = g_strdup_printf("parallel.zero=%d", zero);
        const char *const plain[] = {z, NULL};
        const char *const with[] = {z, "parallel.overlap_param_gather=true", NULL};
        g_autoptr(PpsimScenario) a = parse(yaml, plain, &error);
        ppsim_assert_no_error(error);
        g_autoptr(PpsimScenario) b = parse(yaml, with, &error);
        ppsim_assert_no_error(error);
        g_autoptr(PpsimRunResult) ra = ppsim_sim_run_spec(a, a->schedules->pdata[0], 0, &error);
        ppsim_assert_no_error(error);
        g_autoptr(PpsimRunResult) rb = ppsim_sim_run_spec(b, b->schedules->pdata[0], 0, &error);
        ppsim_assert_no_error(error);
        ck_assert_int_eq(ra->makespan_ps, rb->makespan_ps);
        ck_assert_int_eq(ra->devices[0].zero_gather_ps, rb->devices[0].zero_gather_ps);
        ck_assert_int_eq(ra->devices[0].dp_comm_ps, rb->devices[0].dp_comm_ps);
    }
}
END_TEST

/* parallel.grad_reduce_dtype: the gradients' reduction moves 2 bytes a parameter (bf16, the
 * default) or 4 (fp32); the ZeRO-1/2 weights' all-gather stays 2. In the closed form (dp 2,
 * one GPU a node: a ring over the NICs) ZeRO-0's all-reduce is all gradients, ZeRO-1's the
 * gradients' half of one ring and the weights' half of another, and with
 * overlap_param_gather the weights' half alone moves to the next forward; ZeRO-3's
 * reduce-scatter doubles, its gathers do not; the memory is the same. The kernel model
 * keeps the weights' all-gather and lengthens the reduce-scatter. */
START_TEST(test_grad_reduce_dtype)
{
    g_autoptr(GError) error = NULL;
    const char *yaml = "hardware: {preset: dgx-h100-80gb, nodes: 2}\n"
                       "model: {preset: llama3-8b, seq_len: 2048}\n"
                       "parallel: {tp: 8, pp: 1, dp: 2, overlap_grad_reduce: false}\n"
                       "training: {microbatches: 1}\n"
                       "schedule: 1f1b\n";
    const char *const zeros[] = {"parallel.zero=0", "parallel.zero=1", "parallel.zero=3"};
    for (int closed = 0; closed < 2; closed++)
        for (guint z = 0; z < G_N_ELEMENTS(zeros); z++)
            for (int pg = 0; pg < 2; pg++) {
                /* the overrides: ZeRO, the closed form, the all-gather's overlap, fp32 */
                const char *o[4] = {zeros[z], closed ? "hardware.gpu.efficiency=0.5" : NULL,
                                    pg ? "parallel.overlap_param_gather=true" : NULL, NULL};
                g_auto(Toggle) t = {0};
                toggle_run(&t, yaml, o, 3, "parallel.grad_reduce_dtype=fp32");
                const PpsimStageCost *a = t.a, *b = t.b;
                PpsimScenario *s16 = t.sa;
                ck_assert_int_eq(a->static_mem, b->static_mem);
                ck_assert_int_eq(a->zero_gather_ps, b->zero_gather_ps);
                ck_assert_int_eq(a->pg_ps, b->pg_ps);
                ck_assert_int_gt(b->dp_comm_ps, a->dp_comm_ps);
                if (!closed)
                    continue;
                double bw = 0, P = a->params;
                PpsimTime lat = 0;
                ppsim_par_group_link(&s16->hardware, 2, ppsim_par_dp_stride(s16), &bw, &lat);
                PpsimTime r2 = ppsim_ring_allreduce_ps(2 * P, 2, bw, lat);
                PpsimTime r4 = ppsim_ring_allreduce_ps(4 * P, 2, bw, lat);
                if (z == 0) { /* an all-reduce of the gradients: overlap_param_gather no-op */
                    ck_assert_int_eq(a->dp_comm_ps, r2);
                    ck_assert_int_eq(b->dp_comm_ps, r4);
                    ck_assert_int_eq(b->pg_ps, 0);
                } else if (z == 1) {
                    PpsimTime ag = r2 - r2 / 2;
                    ck_assert_int_eq(b->dp_comm_ps, r4 / 2 + (pg ? 0 : ag));
                    ck_assert_int_eq(b->pg_ps, pg ? ag : 0);
                    ck_assert(llabs((gint64)(b->dp_bytes + b->pg_bytes) - llround(3 * P)) <= 1);
                } else { /* ZeRO-3's reduce-scatter: a ring gather's bytes, doubled */
                    ck_assert_int_eq(b->dp_bytes, 2 * a->dp_bytes);
                    ck_assert_int_eq(a->dp_comm_ps, a->zero_gather_ps);
                }
            }
}
END_TEST

/* FP8 weights (training.fp8_weights) all-gather their linear layers' weights in FP8, 1 byte
 * each, the embedding and the LM head in bf16; the gradients' reduction is unchanged. */
START_TEST(test_fp8_weight_gather)
{
    const char *yaml = "hardware: {preset: dgx-h100-80gb, nodes: 2}\n"
                       "model: {preset: llama3-8b, seq_len: 2048}\n"
                       "parallel: {tp: 8, pp: 1, dp: 2, overlap_grad_reduce: false,\n"
                       "           overlap_param_gather: true}\n"
                       "training: {microbatches: 1, dtype: fp8}\n"
                       "schedule: 1f1b\n";
    for (int closed = 0; closed < 2; closed++)
        for (int zero = 1; zero <= 3; zero += 2) {
            const char *o[4] = {zero == 1 ? "parallel.zero=1" : "parallel.zero=3",
                                closed ? "hardware.gpu.efficiency=0.5" : NULL, NULL, NULL};
            g_auto(Toggle) t = {0};
            toggle_run(&t, yaml, o, 2, "training.fp8_weights=true");
            const PpsimStageCost *a = t.a, *b = t.b;
            PpsimScenario *s16 = t.sa, *s8 = t.sb;
            ck_assert_int_eq(a->dp_comm_ps, b->dp_comm_ps);
            ck_assert_int_eq(a->dp_bytes, b->dp_bytes);
            /* 2P bytes against P + 2 V h / t: the stage holds the embedding and the head */
            double P = a->params, ends = 2.0 * s16->model.vocab * s16->model.hidden / 8.0;
            ck_assert_double_eq_tol(ppsim_par_weight_gather_bytes(a, s16), 2.0 * P, 0.5);
            ck_assert_double_eq_tol(ppsim_par_weight_gather_bytes(b, s8), P + ends, 0.5);
            if (zero == 3) {
                ck_assert_int_lt(b->zero_gather_ps, a->zero_gather_ps);
                ck_assert_int_lt(b->zero_bytes, a->zero_bytes);
            } else {
                ck_assert_int_lt(b->pg_ps, a->pg_ps);
                ck_assert_int_lt(b->pg_bytes, a->pg_bytes);
            }
            if (!closed)
                continue;
            double bw = 0;
            PpsimTime lat = 0;
            ppsim_par_group_link(&s8->hardware, 2, ppsim_par_dp_stride(s8), &bw, &lat);
            if (zero == 1) {
                PpsimTime r = ppsim_ring_allreduce_ps(P + ends, 2, bw, lat);
                ck_assert_int_eq(b->pg_ps, r - r / 2);
                ck_assert(llabs((gint64)b->pg_bytes - llround((P + ends) / 2)) <= 1);
            } else {
                ck_assert_int_eq(b->zero_gather_ps, ppsim_ring_gather_ps(P + ends, 2, bw, lat));
            }
        }
}
END_TEST

/* The text report of every schedule of @sc, run (transfer full). */
static GString *
text_of_runs(const PpsimScenario *sc)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) results = ppsim_sim_run_all(sc, 0, &error);
    ppsim_assert_no_error(error);
    GString *text = g_string_new(NULL);
    ppsim_report_text(text, sc, results);
    return text;
}

/* parallel.grad_sync: all_reduce (DeepSpeed's BF16_Optimizer) reduces the gradients over the
 * whole ring before the weights' all-gather, where ZeRO 1-2 reduce-scatter them (its first
 * half). Two ranks, the reduction after the backward, the weights' all-gather apart
 * (overlap_param_gather): in the closed form the gradients' part is the whole fp32 ring
 * all-reduce, twice the reduce-scatter's bytes; under the kernel model (no overlap of the
 * reduction) twice the reduce-scatter's time; the all-gather the same. An error with ZeRO-3. */
START_TEST(test_grad_sync_all_reduce)
{
    const char *yaml = "hardware: {preset: dgx-h100-80gb, nodes: 2}\n"
                       "model: {preset: llama3-8b, seq_len: 2048}\n"
                       "parallel: {tp: 8, pp: 1, dp: 2, zero: 1, overlap_grad_reduce: false,\n"
                       "           overlap_param_gather: true, grad_reduce_dtype: fp32}\n"
                       "training: {microbatches: 1}\n"
                       "schedule: 1f1b\n";
    for (int closed = 0; closed < 2; closed++) {
        const char *o[4] = {closed ? "hardware.gpu.efficiency=0.5" : NULL, NULL, NULL, NULL};
        g_auto(Toggle) t = {0};
        toggle_run(&t, yaml, o, 1, "parallel.grad_sync=all_reduce");
        const PpsimStageCost *a = t.a, *b = t.b;
        PpsimScenario *sar = t.sb;
        ck_assert_int_eq(a->pg_ps, b->pg_ps); /* the weights' all-gather unchanged */
        ck_assert_uint_eq(a->pg_bytes, b->pg_bytes);
        ck_assert_int_eq(a->est.f_ps, b->est.f_ps);
        if (!closed) { /* kernel model: twice the reduce-scatter's seconds, to a picosecond */
            ck_assert(llabs(b->dp_comm_ps - 2 * a->dp_comm_ps) <= 1);
            continue;
        }
        double bw = 0;
        PpsimTime lat = 0;
        ppsim_par_group_link(&sar->hardware, 2, ppsim_par_dp_stride(sar), &bw, &lat);
        double G = 4.0 * b->params; /* fp32 gradients */
        PpsimTime r = ppsim_ring_allreduce_ps(G, 2, bw, lat);
        ck_assert_int_eq(a->dp_comm_ps, r / 2);
        ck_assert_int_eq(b->dp_comm_ps, r);
        ck_assert(llabs((gint64)a->dp_bytes - llround(G / 2)) <= 1);
        ck_assert(llabs((gint64)b->dp_bytes - llround(G)) <= 1);
    }
    g_autoptr(GError) error = NULL;
    /* the report's layout line says so */
    const char *const ar[] = {"parallel.grad_sync=all_reduce", NULL};
    g_autoptr(PpsimScenario) sc = parse(yaml, ar, &error);
    ppsim_assert_no_error(error);
    g_autoptr(GString) text = text_of_runs(sc);
    ck_assert_ptr_nonnull(strstr(text->str, ", zero 1 (gradients all-reduced), placement "));
    const char *const z3[] = {"parallel.zero=3", "parallel.grad_sync=all_reduce", NULL};
    g_autoptr(PpsimScenario) bad = parse(yaml, z3, &error);
    ck_assert_ptr_null(bad);
    ck_assert_ptr_nonnull(strstr(error->message, "parallel.grad_sync"));
}
END_TEST

/* parallel.zero3_layout: per_param adds FSDP2's copies to F and B under the kernel model, one
 * memory-bound kernel a unit: before every F and every B the unit's gathered weights copied
 * out (2 + 2 bytes a parameter), and once a step (over m microbatches) the gradients copied
 * into the reduce-scatter's buffer (2 + 4 bytes with fp32 reduction); flat adds nothing, nor
 * does per_param below ZeRO-3 or with one rank. */
START_TEST(test_zero3_per_param)
{
    const char *yaml = "hardware: {preset: dgx-h100-80gb, nodes: 2}\n"
                       "model: {preset: llama3-8b, seq_len: 2048}\n"
                       "parallel: {tp: 1, pp: 2, dp: 8, zero: 3, grad_reduce_dtype: fp32}\n"
                       "training: {microbatches: 4}\n"
                       "schedule: 1f1b\n";
    const char *const flat[] = {NULL};
    const char *const per[] = {"parallel.zero3_layout=per_param", NULL};
    g_autoptr(PpsimScenario) sf = NULL;
    g_autoptr(PpsimScenario) sp = NULL;
    g_autoptr(PpsimCosts) cf = costs_of(yaml, flat, 2, &sf);
    g_autoptr(PpsimCosts) cp = costs_of(yaml, per, 2, &sp);
    PpsimGpuSpec g;
    ppsim_kernels_gpu(&sp->hardware, &g);
    for (int s = 0; s < 2; s++) {
        const PpsimStageCost *a = &cf->stage[s], *b = &cp->stage[s];
        double units = a->layers + 1; /* the first stage's embedding, the last's head */
        double P = a->params, out = 4 * P / units, in = 6 * P / units / 4;
        PpsimTime f = 0, bb = 0;
        for (int u = 0; u < (int)units; u++) {
            f += ppsim_time_from_seconds(ppsim_mem_seconds(&g, out));
            bb += ppsim_time_from_seconds(ppsim_mem_seconds(&g, out) + ppsim_mem_seconds(&g, in));
        }
        ck_assert_int_eq(b->est.f_ps - a->est.f_ps, f);
        ck_assert_int_eq(b->est.b_ps - a->est.b_ps, bb);
        ck_assert_int_eq(b->est.w_ps, a->est.w_ps);
        ck_assert_int_eq(b->kern_f_ps[PPSIM_KERN_MEMORY] - a->kern_f_ps[PPSIM_KERN_MEMORY], f);
        ck_assert_int_eq(b->zero_gather_ps, a->zero_gather_ps);
    }
    /* no copies below ZeRO-3, in the closed form, or with a single rank */
    const char *const cases[][3] = {{"parallel.zero=1", NULL},
                                    {"hardware.gpu.efficiency=0.5", NULL},
                                    {"parallel.dp=1", "hardware.gpus_per_node=1", NULL}};
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        const char *on[4] = {"parallel.zero3_layout=per_param", cases[i][0], cases[i][1]};
        g_autoptr(PpsimScenario) s0 = NULL;
        g_autoptr(PpsimScenario) s1 = NULL;
        g_autoptr(PpsimCosts) c0 = costs_of(yaml, cases[i], 2, &s0);
        g_autoptr(PpsimCosts) c1 = costs_of(yaml, on, 2, &s1);
        for (int s = 0; s < 2; s++) {
            ck_assert_int_eq(c1->stage[s].est.f_ps, c0->stage[s].est.f_ps);
            ck_assert_int_eq(c1->stage[s].est.b_ps, c0->stage[s].est.b_ps);
        }
    }
}
END_TEST

/* training.grad_accumulation adds to W, under the kernel model, one memory-bound kernel a unit
 * over its parameters: autograd 3 x 2 bytes a parameter from the second microbatch on
 * ((m - 1) / m of it a microbatch), add 2 + 2 x 4 with fp32 main gradients (2 + 2 x 2 with
 * 16-bit ones), cast_add 2 + 4 + 4 + 4 + 4; fused (the default) nothing, nor anything F, B or
 * the closed form. */
START_TEST(test_grad_accumulation)
{
    const char *yaml = "hardware: {preset: dgx-a100-80gb, nodes: 2}\n"
                       "model: {preset: llama2-7b, seq_len: 2048}\n"
                       "parallel: {tp: 2, pp: 2, dp: 4}\n"
                       "training: {microbatches: 4}\n"
                       "schedule: 1f1b\n";
    const struct {
        const char *mode, *grads;
        double bytes;
    } cases[] = {{"training.grad_accumulation=autograd", NULL, 6.0 * 3 / 4},
                 {"training.grad_accumulation=add", NULL, 10.0},
                 {"training.grad_accumulation=add", "training.main_grads=bf16", 6.0},
                 {"training.grad_accumulation=cast_add", NULL, 18.0}};
    const char *const none[] = {NULL};
    g_autoptr(PpsimScenario) s0 = NULL;
    g_autoptr(PpsimCosts) c0 = costs_of(yaml, none, 2, &s0);
    PpsimGpuSpec g;
    ppsim_kernels_gpu(&s0->hardware, &g);
    ck_assert_double_eq(ppsim_kernels_grad_accum_bytes(s0), 0.0);
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        const char *on[3] = {cases[i].mode, cases[i].grads, NULL};
        g_autoptr(PpsimScenario) s1 = NULL;
        g_autoptr(PpsimCosts) c1 = costs_of(yaml, on, 2, &s1);
        ck_assert_double_eq_tol(ppsim_kernels_grad_accum_bytes(s1), cases[i].bytes, 1e-12);
        for (int s = 0; s < 2; s++) {
            const PpsimStageCost *a = &c0->stage[s], *b = &c1->stage[s];
            double units = a->layers + 1; /* the first stage's embedding, the last's head */
            PpsimTime w = 0;
            for (int u = 0; u < (int)units; u++)
                w += ppsim_time_from_seconds(
                    ppsim_mem_seconds(&g, cases[i].bytes * a->params / units));
            ck_assert_int_eq(b->est.w_ps - a->est.w_ps, w);
            ck_assert_int_eq(b->kern_w_ps[PPSIM_KERN_MEMORY] - a->kern_w_ps[PPSIM_KERN_MEMORY], w);
            ck_assert_int_eq(b->est.f_ps, a->est.f_ps);
            ck_assert_int_eq(b->est.b_ps, a->est.b_ps);
        }
    }
    /* the closed form has no kernels to add */
    const char *const closed[] = {"hardware.gpu.efficiency=0.5", NULL};
    const char *const closed_on[] = {"hardware.gpu.efficiency=0.5",
                                     "training.grad_accumulation=cast_add", NULL};
    g_autoptr(PpsimScenario) s2 = NULL;
    g_autoptr(PpsimScenario) s3 = NULL;
    g_autoptr(PpsimCosts) c2 = costs_of(yaml, closed, 2, &s2);
    g_autoptr(PpsimCosts) c3 = costs_of(yaml, closed_on, 2, &s3);
    for (int s = 0; s < 2; s++)
        ck_assert_int_eq(c3->stage[s].est.w_ps, c2->stage[s].est.w_ps);
    /* ... and says so, where the kernel model says nothing */
    const char *const kernel_on[] = {"training.grad_accumulation=cast_add", NULL};
    g_autoptr(PpsimScenario) s4 = NULL;
    g_autoptr(PpsimCosts) c4 = costs_of(yaml, kernel_on, 2, &s4);
    for (int closed_form = 0; closed_form < 2; closed_form++) {
        g_autoptr(GPtrArray) no_results = g_ptr_array_new();
        g_autoptr(GPtrArray) warns = ppsim_sim_warnings(closed_form ? s3 : s4, no_results);
        gboolean said = FALSE;
        for (guint k = 0; k < warns->len; k++)
            said |= strstr(g_ptr_array_index(warns, k), "'training.grad_accumulation'") != NULL;
        ck_assert_int_eq(said, closed_form);
    }
    /* a bad value names the key */
    g_autoptr(GError) error = NULL;
    const char *const bad[] = {"training.grad_accumulation=sometimes", NULL};
    g_autoptr(PpsimScenario) sb = parse(yaml, bad, &error);
    ck_assert_ptr_null(sb);
    ck_assert_ptr_nonnull(strstr(error->message, "grad_accumulation"));
}
END_TEST

/* model.tied_embeddings: on one stage the head is the embedding (V x h / tp fewer parameters
 * a GPU, and their model states); across two nodes the first and the last stage all-reduce
 * its gradient after the pipeline's last op, a flow of V/tp x h 2-byte values each way over
 * the NIC that lengthens 1F1B's iteration by exactly its duration; a V-shape, whose first and
 * last stage share device 0, sends nothing; T-Offload's CPU optimizer steps, placed as each
 * stage's gradients are ready, do not wait for it (the iteration ends no sooner than both). */
START_TEST(test_tied_embeddings)
{
    g_autoptr(GError) error = NULL;
    const char *one = "hardware: {preset: dgx-h100-80gb, nodes: 1}\n"
                      "model: {layers: 4, hidden: 2048, heads: 16, seq_len: 2048, vocab: 50304}\n"
                      "parallel: {tp: 2, pp: 1, dp: 4}\n"
                      "training: {microbatches: 4}\n"
                      "schedule: 1f1b\n";
    const char *const tie[] = {"model.tied_embeddings=true", NULL};
    const char *const none[] = {NULL};
    g_autoptr(PpsimScenario) su = NULL;
    g_autoptr(PpsimScenario) st = NULL;
    g_autoptr(PpsimCosts) cu = costs_of(one, none, 1, &su);
    g_autoptr(PpsimCosts) ct = costs_of(one, tie, 1, &st);
    double head = 50304.0 * 2048 / 2;
    ck_assert_double_eq_tol(cu->stage[0].params - ct->stage[0].params, head, 1e-6);
    ck_assert_int_eq(cu->stage[0].static_mem - ct->stage[0].static_mem,
                     (gint64)(head * su->training.bytes_per_param + 0.5));
    ck_assert(ct->stage[0].dp_bytes < cu->stage[0].dp_bytes);
    ck_assert_int_eq(ct->tied_grad_bytes, 0); /* one stage: nothing to all-reduce */
    ck_assert_int_eq(cu->stage[0].est.f_ps, ct->stage[0].est.f_ps); /* same kernels */

    const char *two = "hardware: {preset: dgx-h100-80gb, nodes: 2}\n"
                      "model: {layers: 8, hidden: 4096, heads: 32, seq_len: 2048, vocab: 51200}\n"
                      "parallel: {tp: 8, pp: 2, dp: 1}\n"
                      "training: {microbatches: 8}\n"
                      "schedule: [1f1b, zb-v, {name: tpipe, offload_optimizer: t-offload}]\n";
    g_autoptr(PpsimScenario) s0 = parse(two, none, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimScenario) s1 = NULL;
    g_autoptr(PpsimCosts) c1 = costs_of(two, tie, 2, &s1);
    ck_assert_int_eq(c1->tied_grad_bytes, 51200 * 4096 / 8 * 2);
    const PpsimHardware *hw = &s1->hardware;
    double nic = MIN(hw->network_bytes_per_s, hw->pcie_bytes_per_s);
    PpsimTime alone = ppsim_time_from_seconds((double)c1->tied_grad_bytes / nic);
    for (guint k = 0; k < 3; k++) {
        g_autoptr(PpsimRunResult) r0 = ppsim_sim_run_spec(s0, s0->schedules->pdata[k], 0, &error);
        ppsim_assert_no_error(error);
        g_autoptr(PpsimRunResult) r1 = ppsim_sim_run_spec(s1, s1->schedules->pdata[k], 0, &error);
        ppsim_assert_no_error(error);
        PpsimTime more = r1->makespan_ps - r0->makespan_ps;
        if (k == 1) { /* zb-v: device 0 holds the embedding and the head */
            ck_assert_int_eq(more, 0);
            ck_assert_int_eq(r1->tied_grad_ps, 0);
            ck_assert_int_eq(r1->devices[0].dp_comm_ps, 0);
            /* ... and holds the tied matrix once: the untied head's weights, gradients and
             * optimizer states fewer; device 1 holds neither end */
            const PpsimStageCost *last = &c1->stage[1];
            double copy = last->copy_weights_mem + last->copy_grads_mem + last->copy_opt_mem;
            PpsimModelStateBytes want;
            ppsim_mem_model_state(51200.0 * 4096 / 8, &s1->training, 0, 1, &want);
            ck_assert_double_eq_tol(copy, want.weights + want.gradients + want.optimizer, 1e-3);
            ck_assert_int_eq(r0->devices[0].static_memory - r1->devices[0].static_memory,
                             ppsim_round_clamped(copy));
            ck_assert_int_eq(r0->devices[1].static_memory, r1->devices[1].static_memory);
            ck_assert_int_eq(r0->devices[0].mem_weights - r1->devices[0].mem_weights,
                             ppsim_round_clamped(want.weights));
            continue;
        }
        /* the ends on two devices: each keeps its matrix, tied or not */
        for (int d = 0; d < 2; d++)
            ck_assert_int_eq(r0->devices[d].static_memory, r1->devices[d].static_memory);
        ck_assert_int_ge(r1->tied_grad_ps, alone);
        ck_assert_int_le(r1->tied_grad_ps, alone + 2 * hw->network_latency_ps);
        if (k == 2) { /* tpipe with T-Offload */
            ck_assert_int_ge(more, 0);
            ck_assert_int_le(more, r1->tied_grad_ps);
            continue;
        }
        ck_assert_int_eq(more, r1->tied_grad_ps);
        for (int d = 0; d < 2; d++) {
            ck_assert_int_eq(r1->devices[d].dp_comm_ps, r1->tied_grad_ps);
            ck_assert_int_eq(r0->devices[d].dp_comm_ps, 0);
        }
        /* device 0 runs 1F1B's last op: none of it hides */
        ck_assert_int_eq(r1->devices[0].dp_exposed_ps, r1->tied_grad_ps);
    }
}
END_TEST

/* Multi-token prediction (model.mtp_layers, [DSV3] §2.2): on the last stage each depth is one
 * more layer, eh_proj's 2h x h GEMM and a second pass of the head and the loss; the stage
 * keeps a copy of the untied embedding, all-reduced with the first stage's; an MoE model's
 * MTP layer is an MoE layer. */
START_TEST(test_mtp)
{
    g_autoptr(GError) error = NULL;
    const char *two = "hardware: {preset: dgx-h100-80gb, nodes: 2}\n"
                      "model: {mlp: swiglu, layers: 8, hidden: 4096, heads: 32, kv_heads: 8,\n"
                      "        seq_len: 4096, vocab: 128256, stage_layers: [4, 4]}\n"
                      "parallel: {tp: 4, pp: 2, dp: 2, sequence_parallel: true}\n"
                      "training: {microbatches: 8}\n"
                      "schedule: 1f1b\n";
    const char *const none[] = {NULL};
    const char *const mtp[] = {"model.mtp_layers=1", NULL};
    const char *const more[] = {"model.layers=9", "model.stage_layers=[4,5]", NULL};
    g_autoptr(PpsimScenario) s0 = NULL;
    g_autoptr(PpsimScenario) s1 = NULL;
    g_autoptr(PpsimScenario) s9 = NULL;
    g_autoptr(PpsimCosts) c0 = costs_of(two, none, 2, &s0);
    g_autoptr(PpsimCosts) c1 = costs_of(two, mtp, 2, &s1);
    g_autoptr(PpsimCosts) c9 = costs_of(two, more, 2, &s9); /* one more decoder layer */
    ck_assert_int_eq(c1->stage[0].mtp, 0);
    ck_assert_int_eq(c1->stage[1].mtp, 1);
    /* the first stage does not change */
    ck_assert_int_eq(c1->stage[0].est.f_ps, c0->stage[0].est.f_ps);
    ck_assert_double_eq(c1->stage[0].params, c0->stage[0].params);
    const PpsimStageCost *a = &c0->stage[1], *b = &c1->stage[1], *l = &c9->stage[1];
    double h = 4096, V = 128256, t = 4, sbh = 4096.0 * h;
    /* beyond the layer: eh_proj (2 x T x 2h x h) and the head (2 x T x h x V), tp group's */
    ck_assert_double_eq_tol(b->fwd_flops - l->fwd_flops, 2 * sbh * 2 * h + 2 * sbh * V, 1e3);
    /* eh_proj, enorm + hnorm + final RMSNorm, the embedding's copy; / tp */
    ck_assert_double_eq_tol(b->params - l->params, (2 * h * h + 3 * h + V * h) / t, 1e-3);
    /* kept: two norms' inputs, the concatenation, the final norm's input (10 sbh / tp with
     * sequence parallelism) and the logits */
    double logits = ppsim_mem_logits_kept_bytes(s1);
    ck_assert(llabs((b->est.act - l->est.act) - (gint64)(10 * sbh / t + logits)) <= 1);
    ck_assert_int_eq(b->logits_mem, 2 * a->logits_mem);
    /* the kernels: more than one more layer */
    ck_assert_int_gt(b->est.f_ps, l->est.f_ps);
    ck_assert_int_gt(b->est.b_ps, l->est.b_ps);
    ck_assert_int_gt(b->est.w_ps, l->est.w_ps);
    /* the embedding's gradient all-reduced between the two stages, as a tied one */
    ck_assert_int_eq(c0->tied_grad_bytes, 0);
    ck_assert_int_eq(c1->tied_grad_bytes,
                     (guint64)(ppsim_par_grad_reduce_bytes(s1) * V / t * h + 0.5));
    /* one stage: the embedding is there already, nothing to all-reduce */
    const char *const one[] = {"model.mtp_layers=1", "model.stage_layers=[8]", "parallel.pp=1",
                               "parallel.dp=4", NULL};
    g_autoptr(PpsimScenario) so = NULL;
    g_autoptr(PpsimCosts) co = costs_of(two, one, 1, &so);
    ck_assert_int_eq(co->tied_grad_bytes, 0);
    const char *const one0[] = {"model.stage_layers=[8]", "parallel.pp=1",          "parallel.dp=4",
                                "model.layers=9",         "model.stage_layers=[9]", NULL};
    g_autoptr(PpsimScenario) so9 = NULL;
    g_autoptr(PpsimCosts) co9 = costs_of(two, one0, 1, &so9);
    ck_assert_double_eq_tol(co->stage[0].params - co9->stage[0].params, (2 * h * h + 3 * h) / t,
                            1e-3);
    /* MFU counts the MTP depth's FLOPs as the model's */
    g_autoptr(PpsimRunResult) r0 = ppsim_sim_run_spec(s0, s0->schedules->pdata[0], 0, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimRunResult) r1 = ppsim_sim_run_spec(s1, s1->schedules->pdata[0], 0, &error);
    ppsim_assert_no_error(error);
    ck_assert_double_eq_tol(r1->model_flops - r0->model_flops,
                            3.0 * (b->fwd_flops - a->fwd_flops) * 8 * 2, 1e6);
    ck_assert_int_gt(r1->makespan_ps, r0->makespan_ps);

    /* an MoE model: the MTP layer is an MoE layer, its all-to-alls with the stage's */
    const char *moe =
        "hardware: {preset: dgx-h100-80gb, nodes: 2}\n"
        "model: {mlp: swiglu, layers: 4, hidden: 2048, heads: 16, seq_len: 4096,\n"
        "        vocab: 32000, stage_layers: [2, 2],\n"
        "        moe: {experts: 8, top_k: 2, expert_ffn_hidden: 1024, dense_layers: 1}}\n"
        "parallel: {tp: 1, pp: 2, dp: 8, ep: 8}\n"
        "training: {microbatches: 8}\n"
        "schedule: 1f1b\n";
    const char *const moe5[] = {"model.layers=5", "model.stage_layers=[2,3]", NULL};
    g_autoptr(PpsimScenario) m1 = NULL;
    g_autoptr(PpsimScenario) m5 = NULL;
    g_autoptr(PpsimCosts) cm1 = costs_of(moe, mtp, 2, &m1);
    g_autoptr(PpsimCosts) cm5 = costs_of(moe, moe5, 2, &m5);
    ck_assert_int_gt(cm1->stage[1].ep_comm_f_ps, 0);
    ck_assert_int_eq(cm1->stage[1].ep_comm_f_ps, cm5->stage[1].ep_comm_f_ps);
    ck_assert_int_eq(cm1->stage[1].ep_comm_b_ps, cm5->stage[1].ep_comm_b_ps);
    ck_assert_double_eq_tol(cm1->stage[1].expert_params, cm5->stage[1].expert_params, 1e-6);

    /* a negative depth is an error naming the key */
    const char *const bad[] = {"model.mtp_layers=-1", NULL};
    g_autoptr(PpsimScenario) sb = parse(two, bad, &error);
    ck_assert_ptr_null(sb);
    ck_assert_ptr_nonnull(error);
    ck_assert_ptr_nonnull(strstr(error->message, "model.mtp_layers"));
}
END_TEST

/* The text shows mfu and the communication table only for 3D scenarios; JSON always has
 * the keys. */
START_TEST(test_reports)
{
    g_autoptr(GError) error = NULL;
    const char *const ov[] = {"parallel.tp=2", "parallel.pp=4", "parallel.dp=2", "hardware.nodes=2",
                              NULL};
    for (int with = 0; with < 2; with++) {
        g_autoptr(PpsimScenario) sc = parse(gpt_yaml, with ? ov : NULL, &error);
        ppsim_assert_no_error(error);
        g_autoptr(GPtrArray) results = ppsim_sim_run_all(sc, 0, &error);
        ppsim_assert_no_error(error);
        g_autoptr(GString) text = g_string_new(NULL);
        g_autoptr(GString) json = g_string_new(NULL);
        ppsim_report_text(text, sc, results);
        ppsim_report_json(json, sc, results);
        ck_assert_int_eq(strstr(text->str, "     mfu ") != NULL, with);
        ck_assert_int_eq(strstr(text->str, "3D parallelism: tp=2 pp=4 dp=2, 16 GPUs") != NULL,
                         with);
        ck_assert_ptr_null(strstr(text->str, "all-reduced"));
        ck_assert_ptr_nonnull(strstr(json->str, "\"dp_comm_exposed\":"));
        ck_assert_ptr_nonnull(strstr(json->str, "\"mfu\":0."));
        ck_assert_ptr_nonnull(strstr(json->str, with ? "\"gpus\":16" : "\"gpus\":4"));
    }
    /* a `parallel:` section of options alone is no layout: the same report as none */
    const char *const opts[] = {"parallel.placement=tp-pp-dp", "parallel.ep_dispatch=deepep",
                                "parallel.tp_async_backward=false", NULL};
    g_autoptr(PpsimScenario) plain = parse(gpt_yaml, NULL, &error);
    g_autoptr(PpsimScenario) only = parse(gpt_yaml, opts, &error);
    ppsim_assert_no_error(error);
    ck_assert(!only->parallel.present);
    g_autoptr(GString) t0 = text_of_runs(plain);
    g_autoptr(GString) t1 = text_of_runs(only);
    ck_assert_str_eq(t0->str, t1->str);
}
END_TEST

Suite *
ppsim_test_suite(void)
{
    Suite *s = suite_create("parallel");
    TCase *tc = tcase_create("parallel");
    tcase_add_test(tc, test_llama70b_layer);
    tcase_add_test(tc, test_kor_equations);
    tcase_add_test(tc, test_model_presets);
    tcase_add_test(tc, test_zero_stages);
    tcase_add_test(tc, test_ring_costs);
    tcase_add_test(tc, test_tp1_matches_plain);
    tcase_add_test(tc, test_tp2_stage);
    tcase_add_test(tc, test_split_and_batch);
    tcase_add_test(tc, test_dp_reduction);
    tcase_add_test(tc, test_dp_reduction_after_all_chunks);
    tcase_add_test(tc, test_dp_contention);
    tcase_add_test(tc, test_placement_links);
    tcase_add_test(tc, test_zero3);
    tcase_add_test(tc, test_zero3_across_nodes);
    tcase_add_test(tc, test_zero3_gathers_are_flows);
    tcase_add_test(tc, test_zero3_gathers_layer_by_layer);
    tcase_add_test(tc, test_param_gather_overlap);
    tcase_add_test(tc, test_grad_reduce_dtype);
    tcase_add_test(tc, test_fp8_weight_gather);
    tcase_add_test(tc, test_zero3_per_param);
    tcase_add_test(tc, test_grad_sync_all_reduce);
    tcase_add_test(tc, test_grad_accumulation);
    tcase_add_test(tc, test_tied_embeddings);
    tcase_add_test(tc, test_mtp);
    tcase_add_test(tc, test_reports);
    suite_add_tcase(s, tc);
    return s;
}
