/* check-kernels.c: the kernel model (cost/gemm.h, cost/kernels.h, cost/collectives.h) against
 * hand computations: tile and wave quantization of small GEMMs on a 4-SM GPU, the roofline's
 * switch between compute- and memory-bound, causal halving of FlashAttention, the attention
 * kernels' efficiencies (model.attention_kernel), PyTorch's eager elementwise kernels
 * (model.elementwise), model.head_dim's query and K/V widths, MLA's linears and widths
 * (model.mla), the bytes of
 * Megatron's unfused cross-entropy and of its fused and Transformer Engine forms, the NCCL-style
 * collective formulas, the hardware.gpu.efficiency override reproducing the closed-form
 * FLOPs / (peak x efficiency) times exactly, compute_breakdown summing to the busy time, the
 * bytes of FP8's cast, transpose and scaling kernels, and
 * the errors for a GPU lacking a number and a CP degree that does not divide. */
#include "ppsim-test.h"
#include "cost/cost-model.h"
#include "cost/kernels.h"
#include "cost/collectives.h"
#include "cost/parallel.h"
#include "cost/memory.h"
#include "util/ppsim-error.h"

#include <math.h>
#include <string.h>

static PpsimScenario *
parse(const char *yaml, const char *const *overrides, GError **error)
{
    return ppsim_scenario_parse(yaml, strlen(yaml), "t.yaml", ".", overrides, error);
}

/* 4 SMs, 128 x 64 tiles, 100 TFLOP/s at 0.8, 1 TB/s at 0.5, 1 us launches. */
static PpsimGpuSpec
small_gpu(void)
{
    return (PpsimGpuSpec){.peak_flops = 100e12,
                          .gemm_eff = 0.8,
                          .attn_eff = 0.5,
                          .sms = 4,
                          .tile_m = 128,
                          .tile_n = 64,
                          .hbm_bytes_per_s = 1e12,
                          .mem_eff = 0.5,
                          .launch_s = 1e-6};
}

START_TEST(test_quantization)
{
    PpsimGpuSpec g = small_gpu();
    /* 256 x 128: 2 x 2 tiles of 128 x 64 = 4 tiles, one full wave */
    ck_assert_double_eq_tol(ppsim_gemm_quantization(&g, 256, 128, 1024), 1.0, 1e-15);
    /* 200 x 128: still 4 tiles, the last row of tiles 72/128 full: 25600 / 32768 */
    ck_assert_double_eq_tol(ppsim_gemm_quantization(&g, 200, 128, 1024), 0.78125, 1e-15);
    /* 600 x 128: 5 x 2 = 10 tiles in 3 waves of 4: 76800 / (3 x 4 x 8192) */
    ck_assert_double_eq_tol(ppsim_gemm_quantization(&g, 600, 128, 1024), 0.78125, 1e-15);
    /* 640 x 128: 10 tiles, still 3 waves: 81920 / 98304 */
    ck_assert_double_eq_tol(ppsim_gemm_quantization(&g, 640, 128, 1024), 81920.0 / 98304, 1e-15);
    /* the tile lies along the longer side: 128 x 256 is 2 x 2 tiles of 64 x 128 too */
    ck_assert_double_eq_tol(ppsim_gemm_quantization(&g, 128, 256, 1024), 1.0, 1e-15);
    /* one tile on 4 SMs: split-K in 4 slices of 256 fills them; with K = 512 only 2 */
    ck_assert_double_eq_tol(ppsim_gemm_quantization(&g, 128, 64, 1024), 1.0, 1e-15);
    ck_assert_double_eq_tol(ppsim_gemm_quantization(&g, 128, 64, 512), 0.5, 1e-15);
    ck_assert_double_eq_tol(ppsim_gemm_quantization(&g, 128, 64, 128), 0.25, 1e-15);
    /* batched, on a GPU with 10 TB/s (so compute-bound): 3 GEMMs of 128 x 128 are 6 tiles
     * in 2 waves of 4 SMs, 3 x 16384 / (2 x 4 x 8192) = 0.75 of the slots */
    g.hbm_bytes_per_s = 10e12;
    double flops = 3 * 2.0 * 128 * 128 * 4096;
    double want = flops / (100e12 * 0.8 * 0.75) + 1e-6;
    double bytes = 3 * 2.0 * (128 * 4096 + 4096 * 128 + 128 * 128);
    ck_assert_double_gt(want - 1e-6, bytes / 5e12); /* compute-bound */
    ck_assert_double_eq_tol(ppsim_gemm_seconds(&g, 128, 128, 4096, 3), want, 1e-18);
}
END_TEST

/* 512 x 512 x K: 32 tiles in 8 full waves, so compute = 2 x 512^2 K / 80 TFLOP/s; the
 * operands and result move 2 (2 x 512 K + 512^2) bytes at 0.5 TB/s. K = 1024 is
 * compute-bound, K = 256 memory-bound. */
START_TEST(test_roofline_switch)
{
    PpsimGpuSpec g = small_gpu();
    double c1024 = 2.0 * 512 * 512 * 1024 / 80e12,
           m1024 = 2.0 * (2 * 512 * 1024.0 + 512 * 512) / 0.5e12;
    ck_assert_double_gt(c1024, m1024);
    ck_assert_double_eq_tol(ppsim_gemm_seconds(&g, 512, 512, 1024, 1), c1024 + 1e-6, 1e-18);
    double c256 = 2.0 * 512 * 512 * 256 / 80e12,
           m256 = 2.0 * (2 * 512 * 256.0 + 512 * 512) / 0.5e12;
    ck_assert_double_lt(c256, m256);
    ck_assert_double_eq_tol(ppsim_gemm_seconds(&g, 512, 512, 256, 1), m256 + 1e-6, 1e-18);
    /* a memory-bound kernel: bytes / (bandwidth x efficiency) + launch */
    ck_assert_double_eq_tol(ppsim_mem_seconds(&g, 1e9), 2e-3 + 1e-6, 1e-15);
    ck_assert_double_eq(ppsim_mem_seconds(&g, 0), 0);
}
END_TEST

/* A tile's fixed cost: with k_overhead = 144, a compute-bound 512 x 512 x K GEMM runs at
 * K / (K + 144) of its rate, so its compute time grows by (K + 144) / K: 1168/1024 at K =
 * 1024 and 4240/4096 at 4096 (a 1024-deep GEMM at 0.91 of a 4096-deep one's rate); only
 * the compute side of the roofline moves. The presets carry [XLA-MM]'s 144 and the key sets
 * it. */
START_TEST(test_k_overhead)
{
    PpsimGpuSpec g = small_gpu();
    g.k_overhead = 144;
    for (int K = 1024; K <= 4096; K *= 4) {
        double c = 2.0 * 512 * 512 * K / 80e12;
        ck_assert_double_eq_tol(ppsim_gemm_seconds(&g, 512, 512, K, 1), c * (K + 144.0) / K + 1e-6,
                                1e-18);
    }
    /* at K = 256 the fixed cost makes a memory-bound GEMM (test_roofline_switch)
     * compute-bound: 400/256 of 1.68 us against 2.10 us of bytes */
    double c256 = 2.0 * 512 * 512 * 256 / 80e12 * 400.0 / 256,
           m256 = 2.0 * (2 * 512 * 256.0 + 512 * 512) / 0.5e12;
    ck_assert_double_gt(c256, m256);
    ck_assert_double_eq_tol(ppsim_gemm_seconds(&g, 512, 512, 256, 1), c256 + 1e-6, 1e-18);
    g_autoptr(GError) error = NULL;
    const char *yaml = "hardware: {preset: dgx-h100-80gb}\n"
                       "model: {layers: 2, hidden: 1024, heads: 8, seq_len: 1024}\n"
                       "training: {pp: 1, microbatches: 1}\nschedule: 1f1b\n";
    const char *const zero[] = {"hardware.gpu.gemm_k_overhead=0", NULL};
    g_autoptr(PpsimScenario) sc = parse(yaml, NULL, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimScenario) s0 = parse(yaml, zero, &error);
    ppsim_assert_no_error(error);
    ck_assert_double_eq(sc->hardware.gpu_gemm_k_overhead, 144);
    ck_assert_double_eq(s0->hardware.gpu_gemm_k_overhead, 0);
    PpsimGpuSpec a, b;
    ppsim_kernels_gpu(&sc->hardware, &a);
    ppsim_kernels_gpu(&s0->hardware, &b);
    ck_assert_double_eq(a.k_overhead, 144);
    ck_assert_double_gt(ppsim_gemm_seconds(&a, 8192, 8192, 1024, 1),
                        ppsim_gemm_seconds(&b, 8192, 8192, 1024, 1));
}
END_TEST

static const char *gpt_yaml = "hardware: {preset: dgx-a100-80gb}\n"
                              "model: {layers: 8, hidden: 2048, heads: 16, seq_len: 16384}\n"
                              "training: {pp: 2, microbatches: 4}\n"
                              "schedule: 1f1b\n";

/* FlashAttention at s = 16384 is compute-bound: the causal mask halves its FLOPs, so the
 * attention time of a layer's F (less its two launches) halves too; the standard kernels
 * compute every score whether masked or not. */
START_TEST(test_causal_halving)
{
    g_autoptr(GError) error = NULL;
    const char *const nc[] = {"model.causal=false", NULL};
    const char *const std_c[] = {"model.flash_attention=false", NULL};
    const char *const std_nc[] = {"model.flash_attention=false", "model.causal=false", NULL};
    g_autoptr(PpsimScenario) causal = parse(gpt_yaml, NULL, &error);
    g_autoptr(PpsimScenario) full = parse(gpt_yaml, nc, &error);
    g_autoptr(PpsimScenario) sc = parse(gpt_yaml, std_c, &error);
    g_autoptr(PpsimScenario) snc = parse(gpt_yaml, std_nc, &error);
    ppsim_assert_no_error(error);
    PpsimStageCost a = {.layers = 1}, b = {.layers = 1}, c = {.layers = 1}, d = {.layers = 1};
    ppsim_kernels_fill_stage(&a, causal);
    ppsim_kernels_fill_stage(&b, full);
    ppsim_kernels_fill_stage(&c, sc);
    ppsim_kernels_fill_stage(&d, snc);
    PpsimTime launch = causal->hardware.gpu_launch_ps;
    PpsimTime att_c = a.kern_f_ps[PPSIM_KERN_ATTENTION] - launch;
    PpsimTime att_f = b.kern_f_ps[PPSIM_KERN_ATTENTION] - launch;
    ck_assert(llabs(2 * att_c - att_f) <= 2);
    /* by hand: 4 s^2 h / 2 FLOPs at 312 TFLOP/s x the attention efficiency */
    double s = 16384, h = 2048;
    double want = 4 * s * s * h / 2 / (312e12 * causal->hardware.gpu_attention_efficiency);
    ck_assert(llabs(att_c - ppsim_time_from_seconds(want)) <= 1);
    /* the backward re-computes: 2.5x the forward */
    ck_assert(llabs(a.kern_b_ps[PPSIM_KERN_ATTENTION] - launch -
                    ppsim_time_from_seconds(2.5 * want)) <= 1);
    /* standard kernels: causal changes nothing, and they are slower than FlashAttention */
    ck_assert_int_eq(c.est.f_ps, d.est.f_ps);
    ck_assert_int_gt(c.kern_f_ps[PPSIM_KERN_ATTENTION], b.kern_f_ps[PPSIM_KERN_ATTENTION]);
    /* GEMMs and memory-bound kernels do not depend on the mask */
    ck_assert_int_eq(a.kern_f_ps[PPSIM_KERN_GEMM], b.kern_f_ps[PPSIM_KERN_GEMM]);
    ck_assert_int_eq(a.kern_f_ps[PPSIM_KERN_MEMORY], b.kern_f_ps[PPSIM_KERN_MEMORY]);
}
END_TEST

/* A sliding window (model.sliding_window) at s = 16384: FlashAttention computes the 128 x 128
 * tiles the window touches, so a windowed layer's attention is that share of the causal
 * layer's. By hand, 128 query tiles; a window of 4096 keys is 32 tiles: the first 32 query
 * tiles need 1 to 32 key tiles (528), the other 96 need 33 each (3168), against the causal
 * mask's 128 x 129 / 2 = 8256. Which layers: model.full_attention_every. */
START_TEST(test_sliding_window)
{
    g_autoptr(GError) error = NULL;
    const char *const w4k[] = {"model.sliding_window=4096", NULL};
    const char *const wall[] = {"model.sliding_window=16384", NULL};
    const char *const alt[] = {"model.sliding_window=4096", "model.full_attention_every=2", NULL};
    const char *const stdw[] = {"model.sliding_window=4096", "model.flash_attention=false", NULL};
    const char *const stdf[] = {"model.flash_attention=false", NULL};
    g_autoptr(PpsimScenario) causal = parse(gpt_yaml, NULL, &error);
    g_autoptr(PpsimScenario) win = parse(gpt_yaml, w4k, &error);
    g_autoptr(PpsimScenario) whole = parse(gpt_yaml, wall, &error);
    g_autoptr(PpsimScenario) every2 = parse(gpt_yaml, alt, &error);
    g_autoptr(PpsimScenario) sw = parse(gpt_yaml, stdw, &error);
    g_autoptr(PpsimScenario) sf = parse(gpt_yaml, stdf, &error);
    ppsim_assert_no_error(error);
    PpsimStageCost a = {.layers = 1}, b = {.layers = 1}, c = {.layers = 1};
    ppsim_kernels_fill_stage(&a, causal);
    ppsim_kernels_fill_stage(&b, win);
    ppsim_kernels_fill_stage(&c, whole);
    PpsimTime launch = causal->hardware.gpu_launch_ps;
    double share = (528.0 + 3168.0) / 8256.0;
    for (int pass = 0; pass < 2; pass++) {
        PpsimTime full = (pass ? a.kern_b_ps : a.kern_f_ps)[PPSIM_KERN_ATTENTION] - launch;
        PpsimTime got = (pass ? b.kern_b_ps : b.kern_f_ps)[PPSIM_KERN_ATTENTION] - launch;
        ck_assert(llabs(got - (PpsimTime)llround(share * (double)full)) <= 2);
    }
    /* GEMMs and memory-bound kernels do not see the mask; a window as long as the sequence
     * is no window */
    ck_assert_int_eq(a.kern_f_ps[PPSIM_KERN_GEMM], b.kern_f_ps[PPSIM_KERN_GEMM]);
    ck_assert_int_eq(a.kern_b_ps[PPSIM_KERN_MEMORY], b.kern_b_ps[PPSIM_KERN_MEMORY]);
    ck_assert_int_eq(a.est.f_ps, c.est.f_ps);
    ck_assert_int_eq(a.est.b_ps, c.est.b_ps);
    /* every second layer full (layer numbers 2, 4, ...): a stage of layers 1-4 holds two of
     * each; one of layers 2-4 (number 3) is windowed */
    PpsimStageCost four = {.layers = 4}, three = {.first_layer = 1, .layers = 3};
    ppsim_kernels_fill_stage(&four, every2);
    ppsim_kernels_fill_stage(&three, every2);
    for (int k = 0; k < PPSIM_KERN_N; k++) {
        ck_assert(llabs(four.kern_f_ps[k] - 2 * (a.kern_f_ps[k] + b.kern_f_ps[k])) <= 4);
        ck_assert(llabs(three.kern_b_ps[k] - (2 * a.kern_b_ps[k] + b.kern_b_ps[k])) <= 4);
    }
    ck_assert_int_eq(ppsim_model_window_layers_in(&every2->model, 0, 4), 2);
    ck_assert_int_eq(ppsim_model_window_layers_in(&every2->model, 1, 3), 1);
    ck_assert_int_eq(ppsim_model_window_layers_in(&every2->model, 5, 1), 0); /* number 6 */
    ck_assert_int_eq(ppsim_model_window_layers_in(&win->model, 3, 5), 5);
    ck_assert_int_eq(ppsim_model_window_layers_in(&whole->model, 0, 8), 0);
    every2->model.full_attention_every = 6; /* Gemma 3's five local layers to one global */
    ck_assert_int_eq(ppsim_model_window_layers_in(&every2->model, 0, 12), 10);
    ck_assert_int_eq(ppsim_model_window_layers_in(&every2->model, 4, 3), 2); /* 5 and 7 */
    /* the standard kernels compute every score: a window saves them nothing */
    PpsimStageCost d = {.layers = 1}, e = {.layers = 1};
    ppsim_kernels_fill_stage(&d, sw);
    ppsim_kernels_fill_stage(&e, sf);
    ck_assert_int_eq(d.est.f_ps, e.est.f_ps);
    ck_assert_int_eq(d.est.b_ps, e.est.b_ps);
}
END_TEST

/* The keys' errors: the layers to keep full need a window; a window is causal; context
 * parallelism's ring attention over a window is not modelled. */
START_TEST(test_sliding_window_errors)
{
    const char *const bad[][3] = {
        {"model.full_attention_every=2", NULL, "model.sliding_window"},
        {"model.sliding_window=1024", "model.causal=false", "model.causal: true"},
        {"model.sliding_window=-1", NULL, "'model.sliding_window' must be a non-negative"},
    };
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autoptr(GError) error = NULL;
        const char *const sets[] = {bad[i][0], bad[i][1], NULL};
        g_autoptr(PpsimScenario) sc = parse(gpt_yaml, sets, &error);
        ck_assert_ptr_null(sc);
        ck_assert_ptr_nonnull(error);
        ck_assert_msg(strstr(error->message, bad[i][2]) != NULL, "%s", error->message);
    }
    static const char *cp_yaml =
        "hardware: {preset: dgx-h100-80gb, nodes: 1}\n"
        "model: {layers: 8, hidden: 2048, heads: 16, seq_len: 16384, sliding_window: 4096}\n"
        "parallel: {tp: 1, pp: 1, cp: 2, dp: 4}\n"
        "training: {global_batch: 8}\n"
        "schedule: 1f1b\n";
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc = parse(cp_yaml, NULL, &error);
    ck_assert_ptr_null(sc);
    ck_assert_ptr_nonnull(error);
    ck_assert_msg(strstr(error->message, "t.yaml:3:") != NULL &&
                      strstr(error->message, "'model.sliding_window'") != NULL,
                  "%s", error->message);
}
END_TEST

/* A preset derived from another by its HBM (@derived from @base; @sets the two overrides
 * that turn @base into it, memory @mib MiB and @bw_gbs GB/s of HBM): a stage costs exactly
 * what @base costs with those two keys overridden, its GEMMs and attention what @base's
 * cost, and each memory-bound kernel @base_gbs / @bw_gbs of @base's time. */
static void
assert_hbm_variant(const char *derived, const char *base, const char *const *sets, guint64 mib,
                   double bw_gbs, double base_gbs)
{
    static const char *body = "model: {layers: 8, hidden: 4096, heads: 32, seq_len: 4096}\n"
                              "training: {pp: 2, microbatches: 4}\n"
                              "schedule: 1f1b\n";
    g_autofree char *text_a = g_strdup_printf("hardware: {preset: %s}\n%s", derived, body);
    g_autofree char *text_c = g_strdup_printf("hardware: {preset: %s}\n%s", base, body);
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) a = parse(text_a, NULL, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimScenario) b = parse(text_c, sets, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimScenario) c = parse(text_c, NULL, &error);
    ppsim_assert_no_error(error);
    ck_assert_uint_eq(a->hardware.gpu_memory_bytes, mib * 1048576ULL);
    ck_assert_uint_eq(a->hardware.gpu_memory_bytes, b->hardware.gpu_memory_bytes);
    PpsimStageCost sa = {.layers = 1}, sb = {.layers = 1}, sc = {.layers = 1};
    ppsim_kernels_fill_stage(&sa, a);
    ppsim_kernels_fill_stage(&sb, b);
    ppsim_kernels_fill_stage(&sc, c);
    PpsimTime launch = a->hardware.gpu_launch_ps;
    for (int k = 0; k < PPSIM_KERN_N; k++) {
        ck_assert_int_eq(sa.kern_f_ps[k], sb.kern_f_ps[k]);
        ck_assert_int_eq(sa.kern_b_ps[k], sb.kern_b_ps[k]);
    }
    ck_assert_int_eq(sa.kern_f_ps[PPSIM_KERN_GEMM], sc.kern_f_ps[PPSIM_KERN_GEMM]);
    ck_assert_int_eq(sa.kern_f_ps[PPSIM_KERN_ATTENTION], sc.kern_f_ps[PPSIM_KERN_ATTENTION]);
    /* each memory-bound kernel is bytes / (bandwidth x efficiency) + launch: the sum without
     * its launches scales by the bandwidths' ratio */
    double ratio = base_gbs / bw_gbs;
    PpsimTime n = sc.kern_f_ps[PPSIM_KERN_MEMORY] - sa.kern_f_ps[PPSIM_KERN_MEMORY];
    ck_assert_int_ne(n, 0);
    ck_assert((n > 0) == (ratio < 1.0));
    double body_c = (double)n / (1.0 - ratio);
    double launches = ((double)sc.kern_f_ps[PPSIM_KERN_MEMORY] - body_c) / (double)launch;
    ck_assert(fabs(launches - llround(launches)) < 1e-3);
    ck_assert_int_gt(llround(launches), 0);
}

/* dgx-h200-141gb is the H100's with 4.8 TB/s and 143,771 MiB of HBM; dgx-a100-40gb the
 * 80 GB A100's with 1,555 GB/s and 40 GiB. */
START_TEST(test_hbm_variant_presets)
{
    const char *const as_h200[] = {"hardware.gpu.hbm_bandwidth=4800GB/s",
                                   "hardware.gpu.memory=143771MiB", NULL};
    assert_hbm_variant("dgx-h200-141gb", "dgx-h100-80gb", as_h200, 143771, 4800, 3350);
    const char *const as_a100_40[] = {"hardware.gpu.hbm_bandwidth=1555GB/s",
                                      "hardware.gpu.memory=40GiB", NULL};
    assert_hbm_variant("dgx-a100-40gb", "dgx-a100-80gb", as_a100_40, 40 * 1024, 1555, 2039);
}
END_TEST

/* model.attention_kernel: each named kernel times the (compute-bound, s = 16384) attention
 * at its own preset efficiency, by hand, and nothing else moves; default is the preset's
 * attention_efficiency (on the H100 cuDNN's, the same 0.5). An A100 has no FlashAttention-3
 * or cuDNN figure: naming one is an error naming its key; a named kernel with the standard
 * (non-flash) attention is an error at the key's line and column. */
START_TEST(test_attention_kernels)
{
    static const char *h100 = "hardware: {preset: dgx-h100-80gb}\n"
                              "model: {layers: 8, hidden: 2048, heads: 16, seq_len: 16384}\n"
                              "training: {pp: 2, microbatches: 4}\n"
                              "schedule: 1f1b\n";
    static const struct {
        const char *set;
        double eff, bwd; /* forward, backward */
    } k[] = {{"model.attention_kernel=default", 0.5, 0.5},
             {"model.attention_kernel=cudnn", 0.5, 0.5},
             /* the A100's pair, as fa2 scales */
             {"model.attention_kernel=fa1", 0.53 * 0.31 / 0.5, 0.26 * 0.31 / 0.5},
             {"model.attention_kernel=fa2", 0.31, 0.31},
             {"model.attention_kernel=fa3", 0.55, 0.55}};
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) base = parse(h100, NULL, &error);
    ppsim_assert_no_error(error);
    PpsimStageCost b0 = {.layers = 1};
    ppsim_kernels_fill_stage(&b0, base);
    PpsimTime launch = base->hardware.gpu_launch_ps;
    double s = 16384, h = 2048;
    for (guint i = 0; i < G_N_ELEMENTS(k); i++) {
        const char *const set[] = {k[i].set, NULL};
        g_autoptr(PpsimScenario) sc = parse(h100, set, &error);
        ppsim_assert_no_error(error);
        PpsimStageCost a = {.layers = 1};
        ppsim_kernels_fill_stage(&a, sc);
        double want = 4 * s * s * h / 2 / 989e12;
        ck_assert(llabs(a.kern_f_ps[PPSIM_KERN_ATTENTION] - launch -
                        ppsim_time_from_seconds(want / k[i].eff)) <= 1);
        ck_assert(llabs(a.kern_b_ps[PPSIM_KERN_ATTENTION] - launch -
                        ppsim_time_from_seconds(2.5 * want / k[i].bwd)) <= 1);
        ck_assert_int_eq(a.kern_f_ps[PPSIM_KERN_GEMM], b0.kern_f_ps[PPSIM_KERN_GEMM]);
        ck_assert_int_eq(a.kern_f_ps[PPSIM_KERN_MEMORY], b0.kern_f_ps[PPSIM_KERN_MEMORY]);
    }
    /* an override of the named kernel's key is what it runs at */
    const char *const over[] = {"model.attention_kernel=fa2",
                                "hardware.gpu.attention_efficiency_fa2=0.25", NULL};
    g_autoptr(PpsimScenario) sco = parse(h100, over, &error);
    ppsim_assert_no_error(error);
    PpsimStageCost o = {.layers = 1};
    ppsim_kernels_fill_stage(&o, sco);
    ck_assert(llabs(o.kern_f_ps[PPSIM_KERN_ATTENTION] - launch -
                    ppsim_time_from_seconds(4 * s * s * h / 2 / (989e12 * 0.25))) <= 1);
    /* the A100 preset has no FlashAttention-3 figure */
    const char *const fa3[] = {"model.attention_kernel=fa3", NULL};
    g_autoptr(PpsimScenario) a100 = parse(gpt_yaml, fa3, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimCosts) c = ppsim_costs_new(a100, 2, &error);
    ck_assert_ptr_null(c);
    ck_assert_ptr_nonnull(strstr(error->message, "--set model.attention_kernel: "));
    ck_assert_ptr_nonnull(strstr(error->message, "'hardware.gpu.attention_efficiency_fa3'"));
    g_clear_error(&error);
    /* a fused kernel named with the standard attention */
    const char *std = "hardware: {preset: dgx-h100-80gb}\n"
                      "model: {layers: 8, hidden: 2048, heads: 16, seq_len: 2048,\n"
                      "        flash_attention: false, attention_kernel: fa2}\n"
                      "training: {pp: 2, microbatches: 4}\nschedule: 1f1b\n";
    g_autoptr(PpsimScenario) bad = parse(std, NULL, &error);
    ck_assert_ptr_null(bad);
    ck_assert_ptr_nonnull(strstr(error->message, "t.yaml:3:33: 'model.attention_kernel'"));
}
END_TEST

/* The loss as Megatron runs it unfused ([MEG-CE]): per logit, forward 38 bytes (fp32 copy 2 +
 * 4, max 4, subtract 8, exp 8, sum 4, divide 8) and backward 14 (multiply 8, cast back 4 +
 * 2), so doubling the vocabulary adds exactly those bytes over HBM x memory efficiency, the
 * kernel count (so the launches) unchanged. */
START_TEST(test_cross_entropy_bytes)
{
    g_autoptr(GError) error = NULL;
    const char *const v1[] = {"model.vocab=51200", NULL};
    const char *const v2[] = {"model.vocab=102400", NULL};
    const char *yaml = "hardware: {preset: dgx-a100-80gb}\n"
                       "model: {layers: 8, hidden: 2048, heads: 16, seq_len: 2048}\n"
                       "training: {pp: 2, microbatches: 4}\n"
                       "schedule: 1f1b\n";
    g_autoptr(PpsimScenario) a = parse(yaml, v1, &error);
    g_autoptr(PpsimScenario) b = parse(yaml, v2, &error);
    ppsim_assert_no_error(error);
    PpsimStageCost sa = {.layers = 0, .has_head = TRUE}, sb = {.layers = 0, .has_head = TRUE};
    ppsim_kernels_fill_stage(&sa, a);
    ppsim_kernels_fill_stage(&sb, b);
    double logits = 2048.0 * (102400 - 51200); /* T x the added vocabulary, tp = 1 */
    double bw = a->hardware.gpu_hbm_bytes_per_s * a->hardware.gpu_memory_efficiency;
    PpsimTime df = sb.kern_f_ps[PPSIM_KERN_MEMORY] - sa.kern_f_ps[PPSIM_KERN_MEMORY];
    PpsimTime db = sb.kern_b_ps[PPSIM_KERN_MEMORY] - sa.kern_b_ps[PPSIM_KERN_MEMORY];
    ck_assert(llabs(df - ppsim_time_from_seconds(38.0 * logits / bw)) <= 2);
    ck_assert(llabs(db - ppsim_time_from_seconds(14.0 * logits / bw)) <= 2);
}
END_TEST

/* The three loss implementations (model.cross_entropy), per logit forward and backward:
 * Megatron's fused kernels ([MEG-CE] fusions: fp32 copy with the max 2 + 4, subtract-exp-sum
 * 8, divide 8; backward multiply and cast 8 + 2) and Transformer Engine's ([TE] Triton: read
 * 2, read and write the gradient 2 + 2; backward scale in place 2 + 2). At one vocabulary
 * they differ from the unfused kernels by those bytes plus their launches (forward 6, 3 and 2
 * kernels; backward 2, 1, 1). Over two TP ranks the unfused loss all-reduces three 4-byte
 * values a token, the fused one 4 then 8 bytes, TE all-gathers 12 bytes a token: tree
 * all-reduces of 2 latencies and an all-gather of 1 (n = 2). TE keeps the bf16 gradient (2
 * bytes a logit, not 4) and writes nothing more in its backward; the others write the bf16
 * gradient, 2 bytes a logit. */
START_TEST(test_cross_entropy_impls)
{
    static const char *const impl[] = {"unfused", "native", "te"};
    const double fwd[] = {38, 22, 6}, bwd[] = {14, 10, 4};
    const int nf[] = {6, 3, 2}, nb[] = {2, 1, 1};
    const char *yaml = "hardware: {preset: dgx-h100-80gb}\n"
                       "model: {layers: 8, hidden: 2048, heads: 16, seq_len: 2048}\n"
                       "parallel: {tp: 2, pp: 2, dp: 1}\n"
                       "training: {microbatches: 4}\n"
                       "schedule: 1f1b\n";
    PpsimStageCost st[3][2];
    PpsimScenario *sc[3][2];
    for (int i = 0; i < 3; i++)
        for (int v = 0; v < 2; v++) {
            g_autofree char *ce = g_strdup_printf("model.cross_entropy=%s", impl[i]);
            const char *const sets[] = {ce, v ? "model.vocab=102400" : "model.vocab=51200", NULL};
            g_autoptr(GError) error = NULL;
            sc[i][v] = parse(yaml, sets, &error);
            ppsim_assert_no_error(error);
            st[i][v] = (PpsimStageCost){.layers = 0, .has_head = TRUE};
            ppsim_kernels_fill_stage(&st[i][v], sc[i][v]);
        }
    const PpsimHardware *hw = &sc[0][0]->hardware;
    double T = 2048, added = T * (102400 - 51200) / 2, logits = T * 51200 / 2;
    double bw = hw->gpu_hbm_bytes_per_s * hw->gpu_memory_efficiency;
    PpsimTime launch = hw->gpu_launch_ps;
    for (int i = 0; i < 3; i++) {
        PpsimTime df =
            st[i][1].kern_f_ps[PPSIM_KERN_MEMORY] - st[i][0].kern_f_ps[PPSIM_KERN_MEMORY];
        PpsimTime db =
            st[i][1].kern_b_ps[PPSIM_KERN_MEMORY] - st[i][0].kern_b_ps[PPSIM_KERN_MEMORY];
        ck_assert(llabs(df - ppsim_time_from_seconds(fwd[i] * added / bw)) <= 2);
        ck_assert(llabs(db - ppsim_time_from_seconds(bwd[i] * added / bw)) <= 2);
        /* against the unfused loss at one vocabulary: the bytes and the launches saved */
        PpsimTime sf =
            st[0][0].kern_f_ps[PPSIM_KERN_MEMORY] - st[i][0].kern_f_ps[PPSIM_KERN_MEMORY];
        PpsimTime sb =
            st[0][0].kern_b_ps[PPSIM_KERN_MEMORY] - st[i][0].kern_b_ps[PPSIM_KERN_MEMORY];
        PpsimTime want_f = ppsim_time_from_seconds((fwd[0] - fwd[i]) * logits / bw);
        PpsimTime want_b = ppsim_time_from_seconds((bwd[0] - bwd[i]) * logits / bw);
        ck_assert(llabs(sf - want_f - (nf[0] - nf[i]) * launch) <= 8);
        ck_assert(llabs(sb - want_b - (nb[0] - nb[i]) * launch) <= 8);
    }
    /* the loss's TP collectives: the stage's only ones in F (no layers, no embedding) */
    double alpha = (double)hw->nvlink_latency_ps / PPSIM_PS_PER_S;
    double bus = hw->nvlink_bytes_per_s * hw->nvlink_bus_efficiency;
    double comm[] = {3 * (2 * alpha + 4 * T / bus),
                     2 * alpha + 4 * T / bus + 2 * alpha + 8 * T / bus, alpha + 12 * T / bus};
    for (int i = 0; i < 3; i++)
        ck_assert(llabs(st[i][0].tp_comm_f_ps - ppsim_time_from_seconds(comm[i])) <= 3);
    /* memory: what the loss keeps and the gradient its backward writes */
    ck_assert_double_eq(ppsim_mem_logits_kept_bytes(sc[0][0]), 4 * logits);
    ck_assert_double_eq(ppsim_mem_logits_kept_bytes(sc[1][0]), 4 * logits);
    ck_assert_double_eq(ppsim_mem_logits_kept_bytes(sc[2][0]), 2 * logits);
    ck_assert_double_eq(ppsim_mem_logits_grad_bytes(sc[0][0]), 2 * logits);
    ck_assert_double_eq(ppsim_mem_logits_grad_bytes(sc[1][0]), 2 * logits);
    ck_assert_double_eq(ppsim_mem_logits_grad_bytes(sc[2][0]), 0);
    for (int i = 0; i < 3; i++)
        for (int v = 0; v < 2; v++)
            ppsim_scenario_free(sc[i][v]);
}
END_TEST

/* model.dropout and model.rotary on a GELU layer (tp = 1, no embedding or loss), by hand:
 * without dropout each of the two bias-dropout-adds loses its 1-byte mask in F and its
 * backward kernel (2 + 2 bytes and the mask, one launch) in B, and the layer keeps two masks
 * (2sbh) fewer; rotary adds a read and a write of q and k (2 x 2 bytes x T (h + kv)) to F and
 * to B, with a launch each. Unset, they follow the family (GELU: dropout, no rotary; SwiGLU
 * the reverse), and the key lookup reads them resolved. */
START_TEST(test_dropout_rotary)
{
    const char *yaml = "hardware: {preset: dgx-a100-80gb}\n"
                       "model: {layers: 8, hidden: 2048, heads: 16, seq_len: 2048}\n"
                       "parallel: {tp: 1, pp: 2, dp: 1}\n"
                       "training: {microbatches: 4}\n"
                       "schedule: 1f1b\n";
    const char *const none[] = {NULL};
    const char *const nodrop[] = {"model.dropout=false", NULL};
    const char *const rot[] = {"model.rotary=true", NULL};
    const char *const *sets[] = {none, nodrop, rot};
    PpsimStageCost st[3];
    PpsimScenario *sc[3];
    for (int i = 0; i < 3; i++) {
        g_autoptr(GError) error = NULL;
        sc[i] = parse(yaml, sets[i], &error);
        ppsim_assert_no_error(error);
        st[i] = (PpsimStageCost){.layers = 1};
        ppsim_kernels_fill_stage(&st[i], sc[i]);
    }
    const PpsimHardware *hw = &sc[0]->hardware;
    double T = 2048, h = 2048, bw = hw->gpu_hbm_bytes_per_s * hw->gpu_memory_efficiency;
    PpsimTime launch = hw->gpu_launch_ps;
    PpsimTime df = st[0].kern_f_ps[PPSIM_KERN_MEMORY] - st[1].kern_f_ps[PPSIM_KERN_MEMORY];
    PpsimTime db = st[0].kern_b_ps[PPSIM_KERN_MEMORY] - st[1].kern_b_ps[PPSIM_KERN_MEMORY];
    ck_assert(llabs(df - ppsim_time_from_seconds(2 * T * h / bw)) <= 2);
    ck_assert(llabs(db - ppsim_time_from_seconds(2 * 5 * T * h / bw) - 2 * launch) <= 4);
    PpsimTime rf = st[2].kern_f_ps[PPSIM_KERN_MEMORY] - st[0].kern_f_ps[PPSIM_KERN_MEMORY];
    PpsimTime rb = st[2].kern_b_ps[PPSIM_KERN_MEMORY] - st[0].kern_b_ps[PPSIM_KERN_MEMORY];
    PpsimTime want = ppsim_time_from_seconds(4 * T * (h + h) / bw) + launch;
    ck_assert(llabs(rf - want) <= 2);
    ck_assert(llabs(rb - want) <= 2);
    double sbh = T * h;
    ck_assert_double_eq(ppsim_par_layer_act_bytes(&sc[0]->model, 1, 1, FALSE) -
                            ppsim_par_layer_act_bytes(&sc[1]->model, 1, 1, FALSE),
                        2 * sbh);
    double v = -1;
    ck_assert(ppsim_scenario_lookup_number(sc[0], "model.dropout", &v) && v == 1);
    ck_assert(ppsim_scenario_lookup_number(sc[1], "model.dropout", &v) && v == 0);
    ck_assert(ppsim_scenario_lookup_number(sc[0], "model.rotary", &v) && v == 0);
    ck_assert(ppsim_scenario_lookup_number(sc[2], "model.rotary", &v) && v == 1);
    /* SwiGLU: no dropout and rotary unless written */
    const char *const sw[] = {"model.mlp=swiglu", NULL};
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) l = parse(yaml, sw, &error);
    ppsim_assert_no_error(error);
    ck_assert(!ppsim_model_dropout(&l->model) && ppsim_model_rotary(&l->model));
    for (int i = 0; i < 3; i++)
        ppsim_scenario_free(sc[i]);
}
END_TEST

/* model.elementwise: eager (PyTorch's reference Llama code without torch.compile) against
 * fused, per layer, by hand: T = 2048 tokens, h = 2048, kv = 512 (4 of 16 heads), f = 5632.
 * Forward: each fp32 RMSNorm 36 bytes an element in six kernels plus two over one fp32 value
 * a row (fused: 4), rotary 20 on q and k in three kernels each (fused: 4 in one), K and V
 * repeated to h (2 x 2(kv + h)), SwiGLU 10 in two (fused: 6 in one). Backward: 92 in
 * thirteen plus two per norm (fused: 6), rotary 20 (fused: 4), the repeats' sums, SwiGLU
 * 18 in three (fused: 10). Each extra kernel costs one launch. The GELU layer and FP8 are
 * errors naming the key. */
START_TEST(test_eager_elementwise)
{
    const char *yaml = "hardware: {preset: dgx-h100-80gb}\n"
                       "model: {layers: 8, hidden: 2048, heads: 16, kv_heads: 4, seq_len: 2048,\n"
                       "        ffn_hidden: 5632, mlp: swiglu}\n"
                       "training: {pp: 2, microbatches: 4}\n"
                       "schedule: 1f1b\n";
    const char *const eager[] = {"model.elementwise=eager", NULL};
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) fu = parse(yaml, NULL, &error);
    g_autoptr(PpsimScenario) ea = parse(yaml, eager, &error);
    ppsim_assert_no_error(error);
    PpsimStageCost a = {.layers = 1}, b = {.layers = 1};
    ppsim_kernels_fill_stage(&a, fu);
    ppsim_kernels_fill_stage(&b, ea);
    const PpsimHardware *hw = &fu->hardware;
    double T = 2048, h = 2048, kv = 512, f = 5632;
    double bw = hw->gpu_hbm_bytes_per_s * hw->gpu_memory_efficiency;
    double launch = (double)hw->gpu_launch_ps / PPSIM_PS_PER_S;
    double fwd = 2 * (36 - 4) * T * h + 2 * 2 * 8 * T + (20 - 4) * T * (h + kv) +
                 2 * 2 * T * (kv + h) + (10 - 6) * T * f;
    double bwd = 2 * (92 - 6) * T * h + 2 * 2 * 8 * T + (20 - 4) * T * (h + kv) +
                 2 * 2 * T * (h + kv) + (18 - 10) * T * f;
    /* extra launches: norms 2 x 7 (2 x 14 backward), rotary 5, repeats 2, SwiGLU 1 (2) */
    double want_f = fwd / bw + 22 * launch, want_b = bwd / bw + 37 * launch;
    PpsimTime df = b.kern_f_ps[PPSIM_KERN_MEMORY] - a.kern_f_ps[PPSIM_KERN_MEMORY];
    PpsimTime db = b.kern_b_ps[PPSIM_KERN_MEMORY] - a.kern_b_ps[PPSIM_KERN_MEMORY];
    ck_assert(llabs(df - ppsim_time_from_seconds(want_f)) <= 2);
    ck_assert(llabs(db - ppsim_time_from_seconds(want_b)) <= 2);
    /* GEMMs and attention do not move */
    ck_assert_int_eq(a.kern_f_ps[PPSIM_KERN_GEMM], b.kern_f_ps[PPSIM_KERN_GEMM]);
    ck_assert_int_eq(a.kern_b_ps[PPSIM_KERN_ATTENTION], b.kern_b_ps[PPSIM_KERN_ATTENTION]);
    /* without grouped KV there is nothing to repeat */
    const char *const mha[] = {"model.elementwise=eager", "model.kv_heads=16", NULL};
    const char *const mha_f[] = {"model.kv_heads=16", NULL};
    g_autoptr(PpsimScenario) m1 = parse(yaml, mha, &error);
    g_autoptr(PpsimScenario) m0 = parse(yaml, mha_f, &error);
    ppsim_assert_no_error(error);
    PpsimStageCost c = {.layers = 1}, d = {.layers = 1};
    ppsim_kernels_fill_stage(&c, m1);
    ppsim_kernels_fill_stage(&d, m0);
    double fwd_mha = 2 * (36 - 4) * T * h + 2 * 2 * 8 * T + (20 - 4) * T * 2 * h + (10 - 6) * T * f;
    PpsimTime dm = c.kern_f_ps[PPSIM_KERN_MEMORY] - d.kern_f_ps[PPSIM_KERN_MEMORY];
    ck_assert(llabs(dm - ppsim_time_from_seconds(fwd_mha / bw + 20 * launch)) <= 2);
    /* the GELU layer and FP8 are not modelled eager */
    const char *const gelu[] = {"model.elementwise=eager", "model.mlp=gelu", NULL};
    g_autoptr(PpsimScenario) g = parse(yaml, gelu, &error);
    ck_assert_ptr_null(g);
    ck_assert_ptr_nonnull(strstr(error->message, "'model.elementwise: eager'"));
    ck_assert_ptr_nonnull(strstr(error->message, "--set model.elementwise"));
    g_clear_error(&error);
    const char *const fp8[] = {"model.elementwise=eager", "training.dtype=fp8", NULL};
    g_autoptr(PpsimScenario) e8 = parse(yaml, fp8, &error);
    ck_assert_ptr_null(e8);
    ck_assert_ptr_nonnull(strstr(error->message, "FP8"));
}
END_TEST

/* model.head_dim: a Qwen3-style layer (hidden 2048, 32 heads of 128, 4 KV heads) has
 * queries q = 4096 wide and K, V 512 each. By hand: its GEMMs are QKV T x (q + 2kv) x h,
 * the output projection T x h x q, and the SwiGLU MLP's; its attention is that of any layer
 * of 32 heads of 128 (hidden 4096 without head_dim); its parameters and activation bytes
 * count q and kv; and head_dim = hidden / heads written out changes nothing. */
START_TEST(test_head_dim)
{
    const char *yaml = "hardware: {preset: dgx-h100-80gb}\n"
                       "model: {layers: 8, hidden: 2048, heads: 32, kv_heads: 4, head_dim: 128,\n"
                       "        seq_len: 4096, ffn_hidden: 6144, mlp: swiglu}\n"
                       "training: {pp: 2, microbatches: 4}\n"
                       "schedule: 1f1b\n";
    const char *const wide[] = {"model.hidden=4096", NULL};
    const char *const plain[] = {"model.head_dim=64", NULL};
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc = parse(yaml, NULL, &error);
    g_autoptr(PpsimScenario) w = parse(yaml, wide, &error);
    g_autoptr(PpsimScenario) p = parse(yaml, plain, &error);
    ppsim_assert_no_error(error);
    ck_assert_double_eq(ppsim_model_q_width(&sc->model), 4096);
    ck_assert_double_eq(ppsim_model_kv_width(&sc->model), 512);
    PpsimStageCost a = {.layers = 1}, b = {.layers = 1};
    ppsim_kernels_fill_stage(&a, sc);
    ppsim_kernels_fill_stage(&b, w);
    PpsimGpuSpec g;
    ppsim_kernels_gpu(&sc->hardware, &g);
    double T = 4096, h = 2048, q = 4096, kv = 512, f = 6144;
    double gemm_f = ppsim_gemm_seconds(&g, T, q + 2 * kv, h, 1) +
                    ppsim_gemm_seconds(&g, T, h, q, 1) + ppsim_gemm_seconds(&g, T, 2 * f, h, 1) +
                    ppsim_gemm_seconds(&g, T, h, f, 1);
    double gemm_b = ppsim_gemm_seconds(&g, T, h, q + 2 * kv, 1) +
                    ppsim_gemm_seconds(&g, T, q, h, 1) + ppsim_gemm_seconds(&g, T, h, 2 * f, 1) +
                    ppsim_gemm_seconds(&g, T, f, h, 1);
    ck_assert(llabs(a.kern_f_ps[PPSIM_KERN_GEMM] - ppsim_time_from_seconds(gemm_f)) <= 4);
    ck_assert(llabs(a.kern_b_ps[PPSIM_KERN_GEMM] - ppsim_time_from_seconds(gemm_b)) <= 4);
    ck_assert_int_eq(a.kern_f_ps[PPSIM_KERN_ATTENTION], b.kern_f_ps[PPSIM_KERN_ATTENTION]);
    ck_assert_int_eq(a.kern_b_ps[PPSIM_KERN_ATTENTION], b.kern_b_ps[PPSIM_KERN_ATTENTION]);
    /* parameters: QKV h(q + 2kv), projection q h, gate/up/down 3hf, two norms 2h */
    ck_assert_double_eq(ppsim_par_layer_params(&sc->model),
                        h * (q + 2 * kv) + q * h + 3 * h * f + 2 * h);
    /* activations without recompute ([KOR] §4.1 with q and kv): sb(8h + 4q + 4kv + 6f) */
    ck_assert_double_eq_tol(ppsim_par_layer_act_bytes(&sc->model, 1, 1, FALSE),
                            T * (8 * h + 4 * q + 4 * kv + 6 * f), 1e-3);
    /* the model's GEMM FLOPs: 2 T (h (q + 2kv) + q h + 3 h f) */
    ck_assert_double_eq_tol(ppsim_par_layer_gemm_flops(&sc->model, 1),
                            2 * T * (h * (q + 2 * kv) + q * h + 3 * h * f), 1);
    /* head_dim = hidden / heads is the default */
    g_autoptr(PpsimScenario) d = parse(yaml, NULL, &error);
    ppsim_assert_no_error(error);
    d->model.head_dim = 0;
    PpsimStageCost c = {.layers = 1}, e = {.layers = 1};
    ppsim_kernels_fill_stage(&c, p);
    ppsim_kernels_fill_stage(&e, d);
    ck_assert_double_eq(ppsim_model_q_width(&d->model), 2048);
    ck_assert_int_eq(c.est.f_ps, e.est.f_ps);
    ck_assert_int_eq(c.est.b_ps, e.est.b_ps);
    ck_assert_int_eq(c.est.w_ps, e.est.w_ps);
    /* a head_dim of 0 is an error naming the key */
    const char *const zero[] = {"model.head_dim=0", NULL};
    g_autoptr(PpsimScenario) z = parse(yaml, zero, &error);
    ck_assert_ptr_null(z);
    ck_assert_ptr_nonnull(strstr(error->message, "model.head_dim"));
}
END_TEST

/* model.mla: multi-head latent attention ([DSV3] §2.1.1) as Megatron-Core builds it. A layer
 * of hidden 2048, 16 heads, query rank 512, KV rank 256, heads of 128 + 64 rotary for the
 * queries and keys and 128 for the values, by hand: its GEMMs are the query down- and
 * up-projections T x 512 x h and T x 16 (128 + 64) x 512, the KV ones T x (256 + 64) x h and
 * T x 16 (128 + 128) x 256, the output T x h x 16 x 128; the attention core's FLOPs 2 s^2 (16
 * x 192 + 16 x 128), halved causal; parameters and activations count the latents; with tp = 2
 * and sequence parallelism the down-projections run whole on the GPU's T / 2 tokens, the
 * others split; Megatron-Core's FLOPs count ([MEG] `training.py`
 * num_floating_point_operations, multi_latent_attention) is 6 x the parameters. */
START_TEST(test_mla)
{
    const char *yaml = "hardware: {preset: dgx-h100-80gb}\n"
                       "model: {layers: 8, hidden: 2048, heads: 16, seq_len: 4096,\n"
                       "        ffn_hidden: 6144, mlp: swiglu,\n"
                       "        mla: {q_lora_rank: 512, kv_lora_rank: 256, qk_nope_head_dim: 128,\n"
                       "              qk_rope_head_dim: 64, v_head_dim: 128}}\n"
                       "training: {pp: 2, microbatches: 4}\n"
                       "schedule: 1f1b\n";
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc = parse(yaml, NULL, &error);
    ppsim_assert_no_error(error);
    double T = 4096, s = 4096, h = 2048, a = 16, ql = 512, kl = 256, dr = 64, dn = 128, dv = 128,
           f = 6144;
    double qk = a * (dn + dr), vw = a * dv;
    PpsimAttnShape sh;
    ppsim_model_attn_shape(&sc->model, &sh);
    ck_assert_int_eq(sh.n_linear, 5);
    ck_assert_double_eq(sh.qk, qk);
    ck_assert_double_eq(sh.k, qk);
    ck_assert_double_eq(sh.v, vw);
    ck_assert_double_eq(sh.out, vw);
    double linears = h * ql + ql * qk + h * (kl + dr) + kl * a * (dn + dv) + vw * h;
    ck_assert_double_eq(sh.params, linears + ql + kl);
    /* Megatron-Core's bracket, q_term + kv term + rotary key + output, is the parameters */
    double mcore = ql * (h + a * (dn + dr) + 1) + kl * (h + a * (dn + dv) + 1) + h * dr + vw * h;
    ck_assert_double_eq(sh.params, mcore);
    ck_assert_double_eq(ppsim_model_attn_linear_flops(&sc->model), 2 * linears);
    ck_assert_double_eq(ppsim_par_layer_params(&sc->model), sh.params + 3 * h * f + 2 * h);
    ck_assert_double_eq_tol(ppsim_par_layer_gemm_flops(&sc->model, 1),
                            2 * T * (linears + 3 * h * f), 1);
    /* activations: the two norms' inputs and the layer's GEMM inputs (8h), Q, K, V and the
     * output, the latents and their normed copies, the rotary key, the MLP's 6f */
    ck_assert_double_eq_tol(ppsim_par_layer_act_bytes(&sc->model, 1, 1, FALSE),
                            T * (8 * h + 2 * (2 * qk + 2 * vw) + 2 * (2 * (ql + kl) + dr) + 6 * f),
                            1e-3);
    PpsimStageCost st = {.layers = 1};
    ppsim_kernels_fill_stage(&st, sc);
    PpsimGpuSpec g;
    ppsim_kernels_gpu(&sc->hardware, &g);
    g.attn_eff = ppsim_attention_efficiency(&sc->hardware, sc->model.attention_kernel, NULL);
    double gemm_f = ppsim_gemm_seconds(&g, T, ql, h, 1) + ppsim_gemm_seconds(&g, T, qk, ql, 1) +
                    ppsim_gemm_seconds(&g, T, kl + dr, h, 1) +
                    ppsim_gemm_seconds(&g, T, a * (dn + dv), kl, 1) +
                    ppsim_gemm_seconds(&g, T, h, vw, 1) + ppsim_gemm_seconds(&g, T, 2 * f, h, 1) +
                    ppsim_gemm_seconds(&g, T, h, f, 1);
    ck_assert(llabs(st.kern_f_ps[PPSIM_KERN_GEMM] - ppsim_time_from_seconds(gemm_f)) <= 8);
    double flops = 2 * T * s * (qk + vw) * 0.5, io = 2 * T * (qk + vw + qk + vw);
    ck_assert(llabs(st.kern_f_ps[PPSIM_KERN_ATTENTION] -
                    ppsim_time_from_seconds(ppsim_kernel_seconds(&g, flops, g.attn_eff, io))) <= 1);
    /* recompute: mla_up_proj keeps the latents, not Q, K and V: 2 (qk + k + v) bytes a token
     * fewer; each B re-runs the up-projections' GEMMs and the MLA rotary kernels (the queries
     * read and written; the KV up-projection's output and the rotary key read, K and V
     * written); F is unchanged */
    const char *const upr[] = {"model.recompute=mla_up_proj", NULL};
    g_autoptr(PpsimScenario) ur = parse(yaml, upr, &error);
    ppsim_assert_no_error(error);
    ck_assert_double_eq_tol(ppsim_par_layer_act_bytes(&sc->model, 1, 1, FALSE) -
                                ppsim_par_layer_act_bytes(&ur->model, 1, 1, FALSE),
                            T * 2 * (qk + qk + vw), 1e-3);
    PpsimStageCost su = {.layers = 1};
    ppsim_kernels_fill_stage(&su, ur);
    ck_assert_int_eq(su.est.f_ps, st.est.f_ps);
    double rerun = ppsim_gemm_seconds(&g, T, qk, ql, 1) +
                   ppsim_gemm_seconds(&g, T, a * (dn + dv), kl, 1) +
                   ppsim_mem_seconds(&g, 2 * T * (2 * qk + a * (dn + dv) + qk + vw + dr));
    ck_assert(llabs(su.est.b_ps - st.est.b_ps - ppsim_time_from_seconds(rerun)) <= 4);
    /* the closed form: B re-runs the up-projections' 2 T (512 x 3072 + 256 x 4096) FLOPs */
    const char *const upc[] = {"model.recompute=mla_up_proj", "hardware.gpu.efficiency=0.5", NULL};
    const char *const nonec[] = {"hardware.gpu.efficiency=0.5", NULL};
    g_autoptr(PpsimScenario) uc = parse(yaml, upc, &error);
    g_autoptr(PpsimScenario) nc = parse(yaml, nonec, &error);
    ppsim_assert_no_error(error);
    ck_assert_double_eq(ppsim_model_mla_up_params(&uc->model), ql * qk + kl * a * (dn + dv));
    g_autoptr(PpsimCosts) cu = ppsim_costs_new(uc, 2, &error);
    g_autoptr(PpsimCosts) cn = ppsim_costs_new(nc, 2, &error);
    ppsim_assert_no_error(error);
    double up_s = 4.0 * 2 * T * (ql * qk + kl * a * (dn + dv)) / (989e12 * 0.5);
    ck_assert(
        llabs(cu->stage[0].est.b_ps - cn->stage[0].est.b_ps - ppsim_time_from_seconds(up_s)) <= 2);
    /* the mode without MLA is an error naming the key */
    g_clear_error(&error);
    const char *const noml[] = {"model.recompute=mla_up_proj", NULL};
    const char *dense = "hardware: {preset: dgx-h100-80gb}\n"
                        "model: {layers: 8, hidden: 2048, heads: 16, seq_len: 4096}\n"
                        "training: {pp: 2, microbatches: 4}\n";
    g_autoptr(PpsimScenario) nm = parse(dense, noml, &error);
    ck_assert_ptr_null(nm);
    ck_assert_msg(strstr(error->message, "model.recompute") != NULL &&
                      strstr(error->message, "model.mla") != NULL,
                  "%s", error->message);
    g_clear_error(&error);
    /* kv_lora_rank 0 turns MLA off: multi-head attention of the model's width */
    const char *const off[] = {"model.mla.kv_lora_rank=0", NULL};
    g_autoptr(PpsimScenario) mo = parse(yaml, off, &error);
    ppsim_assert_no_error(error);
    ppsim_model_attn_shape(&mo->model, &sh);
    ck_assert_int_eq(sh.n_linear, 2);
    ck_assert_double_eq(sh.params, 4 * h * h);
    /* without query compression the queries come from h: T x 16 x 192 x h */
    const char *const noq[] = {"model.mla.q_lora_rank=0", NULL};
    g_autoptr(PpsimScenario) nq = parse(yaml, noq, &error);
    ppsim_assert_no_error(error);
    ppsim_model_attn_shape(&nq->model, &sh);
    ck_assert_int_eq(sh.n_linear, 4);
    ck_assert_double_eq(sh.params, h * qk + h * (kl + dr) + kl * a * (dn + dv) + vw * h + kl);
    ck_assert_double_eq(sh.gather, h + kl + dr);
    /* tp = 2, sequence parallelism: the down-projections whole on T / 2 tokens */
    const char *const tp2[] = {"parallel.tp=2", "parallel.sequence_parallel=true", "parallel.dp=2",
                               NULL};
    g_autoptr(PpsimScenario) t2 = parse(yaml, tp2, &error);
    ppsim_assert_no_error(error);
    PpsimStageCost st2 = {.layers = 1};
    ppsim_kernels_fill_stage(&st2, t2);
    double gemm_f2 = ppsim_gemm_seconds(&g, T / 2, ql, h, 1) +
                     ppsim_gemm_seconds(&g, T, qk / 2, ql, 1) +
                     ppsim_gemm_seconds(&g, T / 2, kl + dr, h, 1) +
                     ppsim_gemm_seconds(&g, T, a * (dn + dv) / 2, kl, 1) +
                     ppsim_gemm_seconds(&g, T, h, vw / 2, 1) + ppsim_gemm_seconds(&g, T, f, h, 1) +
                     ppsim_gemm_seconds(&g, T, h, f / 2, 1);
    ck_assert(llabs(st2.kern_f_ps[PPSIM_KERN_GEMM] - ppsim_time_from_seconds(gemm_f2)) <= 8);
    /* MLA gives every head's widths: kv_heads and head_dim with it are errors naming them */
    const char *const bad[][2] = {{"model.kv_heads=4", NULL}, {"model.head_dim=64", NULL}};
    const char *const key[] = {"model.kv_heads", "model.head_dim"};
    for (int i = 0; i < 2; i++) {
        g_clear_error(&error);
        g_autoptr(PpsimScenario) b = parse(yaml, bad[i], &error);
        ck_assert_ptr_null(b);
        ck_assert_msg(strstr(error->message, key[i]) != NULL, "%s", error->message);
    }
    /* a section without the KV rank is an error naming it; eager kernels are not MLA's */
    g_clear_error(&error);
    const char *no_kv = "hardware: {preset: dgx-h100-80gb}\n"
                        "model: {layers: 8, hidden: 2048, heads: 16, seq_len: 4096,\n"
                        "        mla: {qk_nope_head_dim: 128, qk_rope_head_dim: 64,\n"
                        "              v_head_dim: 128}}\n"
                        "training: {pp: 2, microbatches: 4}\n";
    g_autoptr(PpsimScenario) nk = parse(no_kv, NULL, &error);
    ck_assert_ptr_null(nk);
    ck_assert_msg(strstr(error->message, "model.mla.kv_lora_rank") != NULL, "%s", error->message);
    g_clear_error(&error);
    const char *const eager[] = {"model.elementwise=eager", NULL};
    g_autoptr(PpsimScenario) e = parse(yaml, eager, &error);
    ck_assert_ptr_null(e);
    ck_assert_msg(strstr(error->message, "model.mla") != NULL, "%s", error->message);
}
END_TEST

START_TEST(test_collectives)
{
    PpsimCommLink l = {.bus_bytes_per_s = 100e9, .alpha_s = 1e-6};
    /* 1 GB over 8 ranks: ring 14 steps, tree 2 x 3; the same 2 x 7/8 GB over busbw */
    double data = 2.0 * 7 / 8 * 1e9 / 100e9;
    ck_assert_double_eq_tol(ppsim_coll_allreduce_s(&l, 1e9, 8), 6e-6 + data, 1e-15);
    /* 8 ranks: tree (6 steps) beats ring (14) at any size; 3 ranks: ring 4 steps, tree 4 */
    ck_assert_double_eq_tol(ppsim_coll_allreduce_s(&l, 8, 8), 6e-6 + 2.0 * 7 / 8 * 8 / 100e9,
                            1e-18);
    ck_assert_double_eq_tol(ppsim_coll_allreduce_s(&l, 3e8, 3), 4e-6 + 2.0 * 2 / 3 * 3e8 / 100e9,
                            1e-15);
    /* latency-bound below ~100 KB: an 8-byte all-reduce costs its steps, not its bytes */
    ck_assert_double_lt(ppsim_coll_allreduce_s(&l, 8, 8), 6.001e-6);
    /* all-gather / reduce-scatter / all-to-all: n - 1 steps, (n-1)/n of the bytes */
    ck_assert_double_eq_tol(ppsim_coll_allgather_s(&l, 1e9, 4), 3e-6 + 0.75e9 / 100e9, 1e-15);
    ck_assert_double_eq_tol(ppsim_coll_reduce_scatter_s(&l, 1e9, 4), 3e-6 + 0.75e9 / 100e9, 1e-15);
    ck_assert_double_eq_tol(ppsim_coll_alltoall_s(&l, 1e9, 4), 3e-6 + 0.75e9 / 100e9, 1e-15);
    ck_assert_double_eq(ppsim_coll_allreduce_s(&l, 1e9, 1), 0);
    /* hierarchical: 16 ranks, 8 per node: reduce-scatter and all-gather of 1 GB among 8 on
     * NVLink, all-reduce of 1/8 GB between the 2 nodes on the network */
    PpsimCommLink nv = {.bus_bytes_per_s = 200e9, .alpha_s = 2e-6};
    double rs = 7 * 2e-6 + 7.0 / 8 * 1e9 / 200e9;
    double ar = 2 * 1e-6 + 2.0 * 1 / 2 * 1e9 / 8 / 100e9; /* 2 ranks: ring = tree = 2 steps */
    ck_assert_double_eq_tol(ppsim_coll_allreduce_hier_s(&nv, &l, 1e9, 16, 8), 2 * rs + ar, 1e-15);
    ck_assert_double_eq_tol(ppsim_coll_allreduce_hier_s(&nv, &l, 1e9, 16, 1),
                            ppsim_coll_allreduce_s(&l, 1e9, 16), 1e-15);
    ck_assert_double_eq_tol(ppsim_coll_allreduce_hier_s(&nv, &l, 1e9, 8, 8),
                            ppsim_coll_allreduce_s(&nv, 1e9, 8), 1e-15);
}
END_TEST

/* hardware.gpu.efficiency set: every op is FLOPs / (peak x efficiency), the closed form
 * ([NAR21] App. FLOPs, [ZB] Table 1 split), whatever the kernel model would say. */
START_TEST(test_efficiency_override)
{
    g_autoptr(GError) error = NULL;
    const char *const ov[] = {"hardware.gpu.efficiency=0.6", "model.seq_len=4096", NULL};
    g_autoptr(PpsimScenario) sc = parse(gpt_yaml, ov, &error);
    ppsim_assert_no_error(error);
    ck_assert(!ppsim_kernels_active(sc));
    g_autoptr(PpsimCosts) c = ppsim_costs_new(sc, 2, &error);
    ppsim_assert_no_error(error);
    ck_assert(!c->kernel_model);
    double s = 4096, h = 2048, L = 4, rate = 312e12 * 0.6;
    double fwd = L * (24 * s * h * h + 4 * s * s * h); /* stage 0: the embedding has no FLOPs */
    ck_assert_int_eq(c->stage[0].est.f_ps, ppsim_time_from_seconds(fwd / rate));
    ck_assert_int_eq(c->stage[0].est.w_ps, ppsim_time_from_seconds(L * 24 * s * h * h / rate));
    ck_assert_int_eq(c->stage[0].est.b_ps,
                     ppsim_time_from_seconds(L * (24 * s * h * h + 8 * s * s * h) / rate));
    ck_assert_int_eq(c->stage[0].kern_f_ps[PPSIM_KERN_GEMM], 0);
    ck_assert_int_eq(c->stage[0].opt_ps, 0);
    /* without it the kernel model times the same stage differently */
    const char *const ov2[] = {"model.seq_len=4096", NULL};
    g_autoptr(PpsimScenario) k = parse(gpt_yaml, ov2, &error);
    g_autoptr(PpsimCosts) ck = ppsim_costs_new(k, 2, &error);
    ppsim_assert_no_error(error);
    ck_assert(ck->kernel_model);
    ck_assert_int_ne(ck->stage[0].est.f_ps, c->stage[0].est.f_ps);
    ck_assert_int_gt(ck->stage[0].opt_ps, 0);
}
END_TEST

/* The optimizer step: one fused Adam pass, 34 bytes a parameter of the stage, or PyTorch's ops
 * one pass each (training.optimizer eager), 92; first-generation FlashAttention on the A100
 * at its own efficiencies, the forward's and the backward's (with the backward's 0, the
 * forward's for both; the backward key moves no other kernel). */
START_TEST(test_optimizer_and_fa1)
{
    g_autoptr(GError) error = NULL;
    const char *const eager[] = {"training.optimizer=eager", NULL};
    g_autoptr(PpsimScenario) f = parse(gpt_yaml, NULL, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimScenario) e = parse(gpt_yaml, eager, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimCosts) cf = ppsim_costs_new(f, 2, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimCosts) ce = ppsim_costs_new(e, 2, &error);
    ppsim_assert_no_error(error);
    PpsimTime launch = f->hardware.gpu_launch_ps;
    double pf = (double)(cf->stage[0].opt_ps - launch), pe = (double)(ce->stage[0].opt_ps - launch);
    ck_assert_double_eq_tol(pe / pf, 92.0 / 34.0, 1e-3);
    ck_assert_int_eq(ce->stage[0].est.f_ps, cf->stage[0].est.f_ps); /* the step only */
    /* fa1 on the A100: its attention's forward at 0.53 of the peak, its backward at 0.26; the
     * default (fa2) at 0.5 both ways, whatever the fa1 backward key says */
    const char *const fa1[] = {"model.attention_kernel=fa1", NULL};
    const char *const one[] = {"model.attention_kernel=fa1",
                               "hardware.gpu.attention_efficiency_fa1_backward=0", NULL};
    const char *const other[] = {"hardware.gpu.attention_efficiency_fa1_backward=0.1", NULL};
    g_autoptr(PpsimScenario) a = parse(gpt_yaml, fa1, &error);
    g_autoptr(PpsimScenario) a1 = parse(gpt_yaml, one, &error);
    g_autoptr(PpsimScenario) o = parse(gpt_yaml, other, &error);
    ppsim_assert_no_error(error);
    PpsimStageCost s1 = {.layers = 1}, s2 = {.layers = 1}, s3 = {.layers = 1}, s4 = {.layers = 1};
    ppsim_kernels_fill_stage(&s1, a);
    ppsim_kernels_fill_stage(&s2, f);
    ppsim_kernels_fill_stage(&s3, a1);
    ppsim_kernels_fill_stage(&s4, o);
    double s = 16384, h = 2048, want = 4 * s * s * h / 2 / 312e12;
    ck_assert(llabs(s1.kern_f_ps[PPSIM_KERN_ATTENTION] - launch -
                    ppsim_time_from_seconds(want / 0.53)) <= 1);
    ck_assert(llabs(s1.kern_b_ps[PPSIM_KERN_ATTENTION] - launch -
                    ppsim_time_from_seconds(2.5 * want / 0.26)) <= 1);
    ck_assert(llabs(s3.kern_b_ps[PPSIM_KERN_ATTENTION] - launch -
                    ppsim_time_from_seconds(2.5 * want / 0.53)) <= 1);
    ck_assert(llabs(s2.kern_f_ps[PPSIM_KERN_ATTENTION] - launch -
                    ppsim_time_from_seconds(want / 0.5)) <= 1);
    ck_assert(llabs(s2.kern_b_ps[PPSIM_KERN_ATTENTION] - launch -
                    ppsim_time_from_seconds(2.5 * want / 0.5)) <= 1);
    ck_assert_int_eq(s4.est.b_ps, s2.est.b_ps);
}
END_TEST

/* The JSON breakdown adds up: a device's busy time is its kernels plus the TP collectives
 * inside its ops; the optimizer step ends the iteration. */
START_TEST(test_breakdown_sums)
{
    g_autoptr(GError) error = NULL;
    const char *yaml = "hardware: {preset: dgx-a100-80gb, nodes: 2}\n"
                       "model: {layers: 8, hidden: 2048, heads: 16, seq_len: 2048}\n"
                       "parallel: {tp: 2, pp: 4, dp: 2, sequence_parallel: true}\n"
                       "training: {microbatches: 8}\n"
                       "schedule: [1f1b, zb-h1]\n";
    g_autoptr(PpsimScenario) sc = parse(yaml, NULL, &error);
    ppsim_assert_no_error(error);
    for (guint k = 0; k < 2; k++) {
        g_autoptr(PpsimRunResult) res = ppsim_sim_run_spec(sc, sc->schedules->pdata[k], 0, &error);
        ppsim_assert_no_error(error);
        ck_assert(res->has_compute_breakdown);
        PpsimTime longest = 0, end = 0;
        for (int d = 0; d < res->p; d++) {
            const PpsimDeviceResult *dev = &res->devices[d];
            PpsimTime sum = dev->compute_gemm_ps + dev->compute_attention_ps +
                            dev->compute_memory_ps + dev->tp_comm_ps;
            /* each op's time is rounded once: a few ps per op */
            ck_assert(llabs(sum - dev->busy_ps) <= 4 * 8 * 4);
            ck_assert_int_gt(dev->compute_gemm_ps, dev->compute_memory_ps);
            ck_assert_int_gt(dev->compute_optimizer_ps, 0);
            longest = MAX(longest, dev->compute_optimizer_ps);
            end = MAX(end, dev->end_ps - dev->compute_optimizer_ps);
        }
        ck_assert_int_eq(res->makespan_ps, end + longest);
    }
}
END_TEST

START_TEST(test_bad_input)
{
    g_autoptr(GError) error = NULL;
    const char *const sms[] = {"hardware.gpu.sms=0", NULL};
    g_autoptr(PpsimScenario) sc = parse(gpt_yaml, sms, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimCosts) c = ppsim_costs_new(sc, 2, &error);
    ck_assert_ptr_null(c);
    /* the message names where the 0 was written: the --set, or the file's line and column */
    ck_assert_ptr_nonnull(strstr(error->message, "--set hardware.gpu.sms: 'hardware.gpu.sms'"));
    g_clear_error(&error);
    const char *zero = "hardware: {preset: dgx-a100-80gb, gpu: {tile_n: 0}}\n"
                       "model: {layers: 8, hidden: 2048, heads: 16, seq_len: 2048}\n"
                       "training: {pp: 2, microbatches: 4}\nschedule: 1f1b\n";
    g_autoptr(PpsimScenario) scz = parse(zero, NULL, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimCosts) cz = ppsim_costs_new(scz, 2, &error);
    ck_assert_ptr_null(cz);
    ck_assert_ptr_nonnull(strstr(error->message, "t.yaml:1:41: 'hardware.gpu.tile_n'"));
    g_clear_error(&error);
    const char *const bw[] = {"hardware.gpu.gemm_efficiency=0", NULL};
    g_autoptr(PpsimScenario) sc2 = parse(gpt_yaml, bw, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimCosts) c2 = ppsim_costs_new(sc2, 2, &error);
    ck_assert_ptr_null(c2);
    ck_assert_ptr_nonnull(strstr(error->message, "'hardware.gpu.gemm_efficiency'"));
    g_clear_error(&error);
    /* the override needs none of them */
    const char *const both[] = {"hardware.gpu.sms=0", "hardware.gpu.efficiency=0.5", NULL};
    g_autoptr(PpsimScenario) sc3 = parse(gpt_yaml, both, &error);
    g_autoptr(PpsimCosts) c3 = ppsim_costs_new(sc3, 2, &error);
    ppsim_assert_no_error(error);
    /* FP8 GEMMs need an FP8 peak: the A100 has none */
    const char *const fp8[] = {"training.dtype=fp8", NULL};
    g_autoptr(PpsimScenario) sc4 = parse(gpt_yaml, fp8, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimCosts) c4 = ppsim_costs_new(sc4, 2, &error);
    ck_assert_ptr_null(c4);
    ck_assert_ptr_nonnull(strstr(error->message, "'hardware.gpu.peak_flops_fp8'"));
    /* the preset left it out: the message names the scenario, not the --set of the dtype */
    ck_assert_ptr_nonnull(strstr(error->message, "t.yaml: 'hardware.gpu.peak_flops_fp8'"));
    g_clear_error(&error);
    /* CP must divide the sequence and the heads */
    const char *cp = "hardware: {preset: dgx-a100-80gb}\n"
                     "model: {layers: 8, hidden: 2048, heads: 16, seq_len: 2048}\n"
                     "parallel: {tp: 1, cp: 3, pp: 2, dp: 1}\n"
                     "training: {microbatches: 4}\nschedule: 1f1b\n";
    g_autoptr(PpsimScenario) bad = parse(cp, NULL, &error);
    ck_assert_ptr_null(bad);
    ck_assert_str_eq(error->message, "t.yaml:3:19: 'parallel.cp' (3) must divide "
                                     "'model.seq_len' (2048) and 'model.heads' (16)");
}
END_TEST

/* Context parallelism: cp = 2 halves each GPU's tokens, so a stage's GEMM time roughly
 * halves and its attention (queries of half the sequence against all of it) halves; the
 * job uses tp x cp x pp x dp GPUs. */
START_TEST(test_context_parallel)
{
    g_autoptr(GError) error = NULL;
    const char *yaml = "hardware: {preset: dgx-a100-80gb}\n"
                       "model: {layers: 8, hidden: 4096, heads: 32, seq_len: 32768}\n"
                       "parallel: {tp: 2, pp: 4, dp: 1}\n"
                       "training: {microbatches: 8}\n"
                       "schedule: 1f1b\n";
    const char *const cp2[] = {"parallel.cp=2", NULL};
    g_autoptr(PpsimScenario) one = parse(yaml, NULL, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimScenario) two = parse(yaml, cp2, &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(ppsim_scenario_gpus(two), 16);
    PpsimStageCost a = {.layers = 2}, b = {.layers = 2};
    ppsim_kernels_fill_stage(&a, one);
    ppsim_kernels_fill_stage(&b, two);
    double ga = a.kern_f_ps[PPSIM_KERN_GEMM], gb = b.kern_f_ps[PPSIM_KERN_GEMM];
    ck_assert_double_lt(fabs(gb / ga - 0.5), 0.02);
    double aa = a.kern_f_ps[PPSIM_KERN_ATTENTION], ab = b.kern_f_ps[PPSIM_KERN_ATTENTION];
    ck_assert_double_lt(fabs(ab / aa - 0.5), 0.01);
    ck_assert_int_lt(b.est.f_ps, a.est.f_ps);
    /* each GPU stores the activations of its half of the sequence */
    g_autoptr(PpsimCosts) ca = ppsim_costs_new(one, 4, &error);
    g_autoptr(PpsimCosts) cb = ppsim_costs_new(two, 4, &error);
    ppsim_assert_no_error(error);
    ck_assert(llabs(ca->stage[1].est.act - 2 * cb->stage[1].est.act) <= 1);
    ck_assert_int_eq(ca->stage[1].p2p_bytes, 2 * cb->stage[1].p2p_bytes);
    /* the closed form (hardware.gpu.efficiency set) splits the same way: each GPU computes
     * its half of every count, F = FLOPs / (2 t x peak x efficiency), keeps half the
     * activations and sends half a boundary; the tp x cp group's FLOPs are the sequence's */
    const char *const cf1[] = {"hardware.gpu.efficiency=0.5", NULL};
    const char *const cf2[] = {"hardware.gpu.efficiency=0.5", "parallel.cp=2", NULL};
    g_autoptr(PpsimScenario) c1 = parse(yaml, cf1, &error);
    g_autoptr(PpsimScenario) c2 = parse(yaml, cf2, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimCosts) k1 = ppsim_costs_new(c1, 4, &error);
    g_autoptr(PpsimCosts) k2 = ppsim_costs_new(c2, 4, &error);
    ppsim_assert_no_error(error);
    const PpsimStageCost *s1 = &k1->stage[1], *s2 = &k2->stage[1];
    ck_assert_double_eq_tol(s1->fwd_flops, s2->fwd_flops, 1);
    /* W: two layers' GEMMs, 24 s h^2 each (QKV 6, projection 2, MLP 16), over t cp = 4 GPUs */
    double sh2 = 32768.0 * 4096 * 4096;
    PpsimTime w = ppsim_time_from_seconds(2 * 24 * sh2 / 4 / (312e12 * 0.5));
    ck_assert(llabs(s2->est.w_ps - w) <= 2);
    ck_assert(llabs(s1->est.w_ps - 2 * s2->est.w_ps) <= 2);
    ck_assert(llabs(s1->est.act - 2 * s2->est.act) <= 1);
    ck_assert_int_eq(s1->p2p_bytes, 2 * s2->p2p_bytes);
}

/* training.dtype: fp8 runs the layers' linear GEMMs at the FP8 peak x its efficiency with
 * 1-byte operands (H100: 1979 TFLOP/s x 0.547 against 989 x 0.62); without its cast and
 * scaling kernels (test_fp8_kernels) nothing else changes. */
START_TEST(test_fp8)
{
    g_autoptr(GError) error = NULL;
    const char *yaml = "hardware: {preset: dgx-h100-80gb}\n"
                       "model: {layers: 8, hidden: 8192, heads: 64, seq_len: 4096}\n"
                       "training: {pp: 1, microbatches: 1}\n"
                       "schedule: 1f1b\n";
    const char *const ov[] = {"training.dtype=fp8", NULL};
    g_autoptr(PpsimScenario) bf = parse(yaml, NULL, &error);
    g_autoptr(PpsimScenario) f8 = parse(yaml, ov, &error);
    ppsim_assert_no_error(error);
    PpsimStageCost a = {.layers = 1}, b = {.layers = 1};
    ppsim_kernels_fill_stage(&a, bf);
    ppsim_kernels_fill_stage(&b, f8);
    const PpsimHardware *hw = &bf->hardware;
    double speedup = hw->gpu_peak_flops_fp8 * hw->gpu_gemm_efficiency_fp8 /
                     (hw->gpu_peak_flops * hw->gpu_gemm_efficiency);
    /* four compute-bound GEMMs of 4096 tokens: their time scales by the rate ratio */
    PpsimTime launch = 4 * hw->gpu_launch_ps;
    double ratio = (double)(a.kern_f_ps[PPSIM_KERN_GEMM] - launch) /
                   (double)(b.kern_f_ps[PPSIM_KERN_GEMM] - launch);
    ck_assert_double_eq_tol(ratio, speedup, 1e-6);
    ck_assert_int_eq(a.kern_f_ps[PPSIM_KERN_ATTENTION], b.kern_f_ps[PPSIM_KERN_ATTENTION]);
    PpsimStageCost c = {.layers = 1};
    ppsim_kernels_fill_stage_scaling(&c, f8, FALSE);
    ck_assert_int_eq(c.kern_f_ps[PPSIM_KERN_GEMM], b.kern_f_ps[PPSIM_KERN_GEMM]);
    ck_assert_int_eq(a.kern_f_ps[PPSIM_KERN_MEMORY], c.kern_f_ps[PPSIM_KERN_MEMORY]);
    ck_assert_int_eq(a.kern_b_ps[PPSIM_KERN_MEMORY], c.kern_b_ps[PPSIM_KERN_MEMORY]);
    ck_assert_int_eq(a.kern_w_ps[PPSIM_KERN_MEMORY], c.kern_w_ps[PPSIM_KERN_MEMORY]);
}
END_TEST

/* The kernels FP8 adds with Transformer Engine's delayed scaling, by hand for a small layer
 * on one GPU of tp = 2 with sequence parallelism: h = 1024, MHA (q = (h + 2h)/2 = 1536
 * outputs), GELU f = 4096 (f/t = 2048), T = 256 tokens (T/t = 128), 4 layers on the GPU, 2
 * microbatches a step. */
START_TEST(test_fp8_kernels)
{
    g_autoptr(GError) error = NULL;
    const char *yaml = "hardware: {preset: dgx-h100-80gb}\n"
                       "model: {layers: 4, hidden: 1024, heads: 8, seq_len: 256, vocab: 1024}\n"
                       "parallel: {tp: 2, pp: 1, dp: 1, sequence_parallel: true}\n"
                       "training: {microbatches: 2, dtype: fp8}\n"
                       "schedule: 1f1b\n";
    const char *const bf[] = {"training.dtype=bf16", NULL};
    const char *const t1[] = {"parallel.tp=1", "parallel.sequence_parallel=false", NULL};
    g_autoptr(PpsimScenario) f8 = parse(yaml, NULL, &error);
    g_autoptr(PpsimScenario) b16 = parse(yaml, bf, &error);
    g_autoptr(PpsimScenario) one = parse(yaml, t1, &error);
    ppsim_assert_no_error(error);
    PpsimFp8Kernels k;
    ppsim_kernels_fp8(f8, &k);
    /* the two norms write 1 byte, not 2, of T/t x h */
    ck_assert_double_eq(k.norm_saved, 2.0 * 128 * 1024);
    /* F: the attention output (T x h/t) and the activation (T x f/t) cast, read 2 write 1 */
    ck_assert_int_eq(k.nf, 2);
    ck_assert_double_eq(k.f[0], 3.0 * 256 * 512);
    ck_assert_double_eq(k.f[1], 3.0 * 256 * 2048);
    /* B: QKV's and fc1's output gradients cast + transposed (2 + 1 + 1 bytes of T x 1536 and
     * T x 2048); the row-parallel layers' gradients (T/t x h) cast before their all-gather */
    ck_assert_int_eq(k.nb, 4);
    double b_want[] = {4.0 * 256 * 1536, 4.0 * 256 * 2048, 3.0 * 128 * 1024, 3.0 * 128 * 1024};
    /* W: the wgrads' transposes (1 + 1): two gathered norm outputs T x h, the attention
     * output, the gathered gradient, the activation, the gathered gradient */
    ck_assert_int_eq(k.nw, 6);
    double w_want[] = {2.0 * 256 * 1024, 2.0 * 256 * 1024, 2.0 * 256 * 512,
                       2.0 * 256 * 1024, 2.0 * 256 * 2048, 2.0 * 256 * 1024};
    double sb = 0, sw = 0;
    for (int i = 0; i < 4; i++) {
        ck_assert_double_eq(k.b[i], b_want[i]);
        sb += k.b[i];
    }
    for (int i = 0; i < 6; i++) {
        ck_assert_double_eq(k.w[i], w_want[i]);
        sw += k.w[i];
    }
    /* weights once a step, 4 bytes an element: h x 1536, h/t x h, h x f/t, f/t x h */
    double wt_want[] = {4.0 * 1024 * 1536, 4.0 * 512 * 1024, 4.0 * 1024 * 2048, 4.0 * 2048 * 1024};
    for (int i = 0; i < 4; i++)
        ck_assert_double_eq(k.weight[i], wt_want[i]);
    /* amax / scale updates over the 4 layers: 12 tensors forward, 8 backward, each its 1024
     * fp32 history read and written plus 16 bytes; the concatenation 8 bytes a tensor */
    ck_assert_double_eq(k.update_f[0], 4 * 12 * 8.0);
    ck_assert_double_eq(k.update_f[1], 4 * 12 * (8192.0 + 16));
    ck_assert_double_eq(k.update_b[0], 4 * 8 * 8.0);
    ck_assert_double_eq(k.update_b[1], 4 * 8 * (8192.0 + 16));

    /* the stage's times: FP8 with these kernels against FP8 without them, exactly their
     * bytes over HBM x memory efficiency plus one launch each */
    PpsimStageCost with = {.layers = 1}, without = {.layers = 1};
    ppsim_kernels_fill_stage(&with, f8);
    ppsim_kernels_fill_stage_scaling(&without, f8, FALSE);
    const PpsimHardware *hw = &f8->hardware;
    double bw = hw->gpu_hbm_bytes_per_s * hw->gpu_memory_efficiency;
    double L = hw->gpu_launch_ps / (double)PPSIM_PS_PER_S;
    double weights = 0;
    for (int i = 0; i < 4; i++)
        weights += (wt_want[i] / bw + L) / 2; /* spread over the 2 microbatches */
    double upd_f = (k.update_f[0] + k.update_f[1]) / bw + 2 * L;
    double upd_b = (k.update_b[0] + k.update_b[1]) / bw + 2 * L;
    double df = (k.f[0] + k.f[1] - k.norm_saved) / bw + 2 * L + weights + upd_f;
    double db = sb / bw + 4 * L + upd_b;
    double dw = sw / bw + 6 * L;
    int M = PPSIM_KERN_MEMORY;
    ck_assert(llabs(with.kern_f_ps[M] - without.kern_f_ps[M] - ppsim_time_from_seconds(df)) <= 4);
    ck_assert(llabs(with.kern_b_ps[M] - without.kern_b_ps[M] - ppsim_time_from_seconds(db)) <= 4);
    ck_assert(llabs(with.kern_w_ps[M] - without.kern_w_ps[M] - ppsim_time_from_seconds(dw)) <= 4);
    ck_assert_int_eq(with.kern_f_ps[PPSIM_KERN_GEMM], without.kern_f_ps[PPSIM_KERN_GEMM]);
    /* FP8 is slower with them, in every pass */
    ck_assert_int_gt(with.est.f_ps + with.est.b_ps + with.est.w_ps,
                     without.est.f_ps + without.est.b_ps + without.est.w_ps);
    ck_assert_int_gt(with.est.b_ps, without.est.b_ps);
    ck_assert_int_gt(with.est.w_ps, without.est.w_ps);

    /* BF16: no FP8 kernels, and the switch changes nothing */
    PpsimFp8Kernels kb;
    ppsim_kernels_fp8(b16, &kb);
    ck_assert_int_eq(kb.nf + kb.nb + kb.nw, 0);
    ck_assert_double_eq(kb.norm_saved + kb.weight[0] + kb.update_f[1] + kb.update_b[1], 0);
    PpsimStageCost x = {.layers = 1}, y = {.layers = 1};
    ppsim_kernels_fill_stage(&x, b16);
    ppsim_kernels_fill_stage_scaling(&y, b16, FALSE);
    ck_assert_int_eq(x.est.f_ps, y.est.f_ps);
    ck_assert_int_eq(x.est.b_ps, y.est.b_ps);
    ck_assert_int_eq(x.est.w_ps, y.est.w_ps);
    ck_assert_int_eq(x.tp_comm_f_ps, y.tp_comm_f_ps);

    /* without sequence parallelism (tp = 1) the Linear layers cast and transpose in one
     * kernel (2 + 1 + 1) in F and in B, and the wgrad transposes only the norm outputs */
    ppsim_kernels_fp8(one, &k);
    ck_assert_int_eq(k.nf, 2);
    ck_assert_int_eq(k.nb, 4);
    ck_assert_int_eq(k.nw, 2);
    ck_assert_double_eq(k.f[0], 4.0 * 256 * 1024);
    ck_assert_double_eq(k.b[2], 4.0 * 256 * 1024);
    ck_assert_double_eq(k.norm_saved, 2.0 * 256 * 1024);
}
END_TEST

/* FP8 current scaling (training.fp8_recipe: current) on the layer of test_fp8_kernels, by
 * hand: every cast gains an amax pass over its bf16 input (2 bytes an element) and a
 * one-value scale kernel (8 bytes, one launch); the norms write bf16 and cast after; each
 * weight is read once more; no amax history; and with sequence parallelism two amax
 * all-reduces over the TP group a pass. */
START_TEST(test_fp8_current_scaling)
{
    g_autoptr(GError) error = NULL;
    const char *yaml = "hardware: {preset: dgx-h100-80gb}\n"
                       "model: {layers: 4, hidden: 1024, heads: 8, seq_len: 256, vocab: 1024}\n"
                       "parallel: {tp: 2, pp: 1, dp: 1, sequence_parallel: true}\n"
                       "training: {microbatches: 2, dtype: fp8, fp8_recipe: current}\n"
                       "schedule: 1f1b\n";
    const char *const delayed[] = {"training.fp8_recipe=delayed", NULL};
    g_autoptr(PpsimScenario) cs = parse(yaml, NULL, &error);
    g_autoptr(PpsimScenario) ds = parse(yaml, delayed, &error);
    ppsim_assert_no_error(error);
    PpsimFp8Kernels k, d;
    ppsim_kernels_fp8(cs, &k);
    ppsim_kernels_fp8(ds, &d);
    ck_assert_double_eq(k.norm_saved, 0);
    /* F: per norm a scale kernel and the cast of its T/t x h output (2 + 1); per Linear input
     * (T x h/t, T x f/t) the amax pass and the scale before delayed scaling's cast */
    double f_want[] = {8.0,
                       3.0 * 128 * 1024,
                       8.0,
                       3.0 * 128 * 1024,
                       2.0 * 256 * 512,
                       8.0,
                       3.0 * 256 * 512,
                       2.0 * 256 * 2048,
                       8.0,
                       3.0 * 256 * 2048};
    ck_assert_int_eq(k.nf, G_N_ELEMENTS(f_want));
    for (guint i = 0; i < G_N_ELEMENTS(f_want); i++)
        ck_assert_double_eq(k.f[i], f_want[i]);
    /* B: each of delayed scaling's four casts preceded by its amax pass and scale */
    ck_assert_int_eq(k.nb, 3 * d.nb);
    for (int i = 0; i < d.nb; i++) {
        ck_assert_double_eq(k.b[3 * i + 2], d.b[i]);
        ck_assert_double_eq(k.b[3 * i + 1], 8.0);
        ck_assert_double_eq(k.b[3 * i], 2.0 * d.b[i] / (i < 2 ? 4.0 : 3.0));
    }
    /* W: the same transposes */
    ck_assert_int_eq(k.nw, d.nw);
    for (int i = 0; i < d.nw; i++)
        ck_assert_double_eq(k.w[i], d.w[i]);
    /* weights: 2 + 1 + 1 bytes an element plus the amax read, 2 */
    for (int i = 0; i < 4; i++)
        ck_assert_double_eq(k.weight[i], d.weight[i] * 6.0 / 4.0);
    ck_assert_double_eq(k.update_f[0] + k.update_f[1] + k.update_b[0] + k.update_b[1], 0);

    /* the stage: the TP collectives gain two 4-byte all-reduces a pass over the pair (tree:
     * 2 log2(2) latencies each, and 4 bytes over the bus); delayed scaling instead
     * all-reduces the amaxes of the GPU's 4 layers over its amax group, here the TP pair
     * (dp = cp = 1): 4 GEMMs x 3 tensors x 4 bytes a layer forward, x 2 tensors backward */
    PpsimStageCost a = {.layers = 1}, b = {.layers = 1};
    ppsim_kernels_fill_stage(&a, cs);
    ppsim_kernels_fill_stage(&b, ds);
    const PpsimHardware *hw = &cs->hardware;
    double alpha = (double)hw->nvlink_latency_ps / PPSIM_PS_PER_S;
    double bus = hw->nvlink_bytes_per_s * hw->nvlink_bus_efficiency;
    double amax = 2.0 * (2.0 * alpha + 2.0 * 1 / 2 * 4.0 / bus);
    double red_f = 2.0 * alpha + 4 * 4 * 3 * 4.0 / bus, red_b = 2.0 * alpha + 4 * 4 * 2 * 4.0 / bus;
    ck_assert(llabs(a.tp_comm_f_ps - b.tp_comm_f_ps - ppsim_time_from_seconds(amax - red_f)) <= 2);
    ck_assert(llabs(a.tp_comm_b_ps - b.tp_comm_b_ps - ppsim_time_from_seconds(amax - red_b)) <= 2);
    /* over 4 nodes (dp 16): the amax group is all 32 GPUs, 8 a node (the TP pair times the 4
     * replicas there), a hierarchical all-reduce; only that term of the stage changes */
    const char *const wide[] = {"training.fp8_recipe=delayed", "parallel.dp=16", "hardware.nodes=4",
                                NULL};
    g_autoptr(PpsimScenario) ws = parse(yaml, wide, &error);
    ppsim_assert_no_error(error);
    PpsimStageCost wst = {.layers = 1};
    ppsim_kernels_fill_stage(&wst, ws);
    PpsimCommLink intra = {.bus_bytes_per_s = bus, .alpha_s = alpha};
    PpsimCommLink inter = {.bus_bytes_per_s = hw->network_bytes_per_s * hw->network_bus_efficiency,
                           .alpha_s = (double)hw->network_latency_ps / PPSIM_PS_PER_S};
    double hier = ppsim_coll_allreduce_hier_s(&intra, &inter, 4 * 4 * 3 * 4.0, 32, 8);
    ck_assert(hier > red_f);
    ck_assert(llabs(wst.tp_comm_f_ps - b.tp_comm_f_ps - ppsim_time_from_seconds(hier - red_f)) <=
              2);
    /* slower than delayed scaling in F and B, the same GEMMs, the same W */
    ck_assert_int_gt(a.est.f_ps, b.est.f_ps);
    ck_assert_int_gt(a.est.b_ps, b.est.b_ps);
    ck_assert_int_eq(a.est.w_ps, b.est.w_ps);
    ck_assert_int_eq(a.kern_f_ps[PPSIM_KERN_GEMM], b.kern_f_ps[PPSIM_KERN_GEMM]);

    /* current scaling without FP8 is an error naming the key */
    const char *const bf[] = {"training.dtype=bf16", NULL};
    g_autoptr(GError) bad = NULL;
    g_autoptr(PpsimScenario) none = parse(yaml, bf, &bad);
    ck_assert_ptr_null(none);
    ck_assert_ptr_nonnull(bad);
    ck_assert(g_str_has_prefix(bad->message, "t.yaml:4:"));
    ck_assert_ptr_nonnull(strstr(bad->message, "training.fp8_recipe"));
    ck_assert_ptr_nonnull(strstr(bad->message, "training.dtype: fp8"));
    /* ... and when --set wrote the key, the message names the flag, not a file position */
    const char *const late[] = {"training.dtype=bf16", "training.fp8_recipe=current", NULL};
    g_autoptr(GError) bad_set = NULL;
    g_autoptr(PpsimScenario) none_set = parse(yaml, late, &bad_set);
    ck_assert_ptr_null(none_set);
    ck_assert_ptr_nonnull(bad_set);
    ck_assert(g_str_has_prefix(bad_set->message, "--set training.fp8_recipe: "));
}
END_TEST

/* FP8 block scaling (training.fp8_recipe: blockwise) on the layer of test_fp8_kernels, by
 * hand: one quantizing pass a tensor (read 2, write 1 + 1), timed at the ratio [TE-GEMM]'s H200
 * table gives block scaling's quantization over delayed scaling's cast + transpose; the norms
 * write bf16; with sequence parallelism both copies gathered (2 bytes a value, as bf16) and
 * the gathered column-wise copy transposed; no wgrad transposes, no amax history, no amax
 * all-reduce; the GEMMs those of delayed scaling. */
START_TEST(test_fp8_block_scaling)
{
    g_autoptr(GError) error = NULL;
    const char *yaml = "hardware: {preset: dgx-h100-80gb}\n"
                       "model: {layers: 4, hidden: 1024, heads: 8, seq_len: 256, vocab: 1024}\n"
                       "parallel: {tp: 2, pp: 1, dp: 1, sequence_parallel: true}\n"
                       "training: {microbatches: 2, dtype: fp8, fp8_recipe: blockwise}\n"
                       "schedule: 1f1b\n";
    const char *const delayed[] = {"training.fp8_recipe=delayed", NULL};
    const char *const bf[] = {"training.dtype=bf16", "training.fp8_recipe=delayed", NULL};
    g_autoptr(PpsimScenario) bs = parse(yaml, NULL, &error);
    g_autoptr(PpsimScenario) ds = parse(yaml, delayed, &error);
    g_autoptr(PpsimScenario) b16 = parse(yaml, bf, &error);
    ppsim_assert_no_error(error);
    /* [TE-GEMM]: per layer, the GEMMs alone 16.785 ms; with delayed scaling's casts 18.978,
     * with block scaling's quantization 22.882 */
    double Q = 4.0 * (22.882 - 16.785) / (18.978 - 16.785);
    ck_assert(Q > 11.1 && Q < 11.2);
    PpsimFp8Kernels k;
    ppsim_kernels_fp8(bs, &k);
    ck_assert_double_eq(k.norm_saved, 0);
    /* F: each norm output (T/t x h) quantized, its gathered column-wise copy (T x h)
     * transposed; the attention output (T x h/t) and the activation (T x f/t) quantized */
    double f_want[] = {Q * 128 * 1024,   2.0 * 256 * 1024, Q * 128 * 1024,
                       2.0 * 256 * 1024, Q * 256 * 512,    Q * 256 * 2048};
    ck_assert_int_eq(k.nf, G_N_ELEMENTS(f_want));
    for (guint i = 0; i < G_N_ELEMENTS(f_want); i++)
        ck_assert(fabs(k.f[i] - f_want[i]) <= 1e-6 * f_want[i]);
    /* B: QKV's and fc1's output gradients (T x 1536, T x 2048) quantized; each row-parallel
     * gradient (T/t x h) quantized before its all-gather, then transposed (T x h) */
    double b_want[] = {Q * 256 * 1536,   Q * 256 * 2048, Q * 128 * 1024,
                       2.0 * 256 * 1024, Q * 128 * 1024, 2.0 * 256 * 1024};
    ck_assert_int_eq(k.nb, G_N_ELEMENTS(b_want));
    for (guint i = 0; i < G_N_ELEMENTS(b_want); i++)
        ck_assert(fabs(k.b[i] - b_want[i]) <= 1e-6 * b_want[i]);
    ck_assert_int_eq(k.nw, 0);
    double wt_want[] = {Q * 1024 * 1536, Q * 512 * 1024, Q * 1024 * 2048, Q * 2048 * 1024};
    for (int i = 0; i < 4; i++)
        ck_assert(fabs(k.weight[i] - wt_want[i]) <= 1e-6 * wt_want[i]);
    ck_assert_double_eq(k.update_f[0] + k.update_f[1] + k.update_b[0] + k.update_b[1], 0);

    /* the stage: delayed scaling's GEMMs; the TP collectives of bf16 (both copies gathered,
     * no amax all-reduce); slower than delayed scaling in F and B, faster in W */
    PpsimStageCost a = {.layers = 1}, d = {.layers = 1}, x = {.layers = 1};
    ppsim_kernels_fill_stage(&a, bs);
    ppsim_kernels_fill_stage(&d, ds);
    ppsim_kernels_fill_stage(&x, b16);
    for (int p = 0; p < 3; p++) {
        const PpsimTime *ka = p == 0 ? a.kern_f_ps : p == 1 ? a.kern_b_ps : a.kern_w_ps;
        const PpsimTime *kd = p == 0 ? d.kern_f_ps : p == 1 ? d.kern_b_ps : d.kern_w_ps;
        ck_assert_int_eq(ka[PPSIM_KERN_GEMM], kd[PPSIM_KERN_GEMM]);
    }
    ck_assert_int_eq(a.tp_comm_f_ps, x.tp_comm_f_ps);
    ck_assert_int_eq(a.tp_comm_b_ps, x.tp_comm_b_ps);
    ck_assert_int_gt(a.est.f_ps, d.est.f_ps);
    ck_assert_int_gt(a.est.b_ps, d.est.b_ps);
    ck_assert_int_lt(a.est.w_ps, d.est.w_ps);

    /* block scaling without FP8 is an error naming the key */
    const char *const late[] = {"training.dtype=bf16", NULL};
    g_autoptr(GError) bad = NULL;
    g_autoptr(PpsimScenario) none = parse(yaml, late, &bad);
    ck_assert_ptr_null(none);
    ck_assert_ptr_nonnull(bad);
    ck_assert_ptr_nonnull(strstr(bad->message, "training.fp8_recipe"));
}
END_TEST

/* What one TP collective of @c seconds adds split under an M x N x K GEMM of tp = 8 chunks
 * (kernels.c tp_split): comm less 7/8 of the GEMM, and 7 more launches. */
static double
split8(const PpsimGpuSpec *g, double c, double M, double N, double K)
{
    return MAX(0.0, c - ppsim_gemm_seconds(g, M, N, K, 1) * 7.0 / 8.0) + 7.0 * g->launch_s;
}

/* ... and a reduce-scatter of @c seconds pipelined under it in 4 chunks, the GEMM on all but
 * 16 SMs (kernels.c tp_pipeline): the last chunk's share always shows. */
static double
pipe4(const PpsimGpuSpec *g, double c, double M, double N, double K)
{
    PpsimGpuSpec fewer = *g;
    fewer.sms -= 16;
    double gm = ppsim_gemm_seconds(&fewer, M, N, K, 1);
    return MAX(gm + c / 4, gm / 4 + c) + 3 * g->launch_s - ppsim_gemm_seconds(g, M, N, K, 1);
}

/* parallel.tp_comm_overlap splits each of sequence parallelism's collectives under the GEMM
 * beside it, as Transformer Engine's userbuffers do: forward the all-gathers under QKV and
 * fc1 (ring exchange), the reduce-scatters under the output projection and fc2 (pipelined);
 * backward the output gradients' all-gathers under the projection's and fc2's dgrad; QKV and
 * fc1 in bulk, their input's all-gather beside their dgrad, their input gradient's
 * reduce-scatter beside their wgrad. Each pair is counted by hand from the GEMM shapes. */
START_TEST(test_tp_overlap)
{
    g_autoptr(GError) error = NULL;
    const char *yaml = "hardware: {preset: dgx-h100-80gb}\n"
                       "model: {layers: 8, hidden: 8192, heads: 64, seq_len: 4096}\n"
                       "parallel: {tp: 8, pp: 1, dp: 1, sequence_parallel: true}\n"
                       "training: {microbatches: 1}\n"
                       "schedule: 1f1b\n";
    const char *const ov[] = {"parallel.tp_comm_overlap=true", NULL};
    g_autoptr(PpsimScenario) plain = parse(yaml, NULL, &error);
    g_autoptr(PpsimScenario) over = parse(yaml, ov, &error);
    ppsim_assert_no_error(error);
    PpsimStageCost a = {.layers = 2}, b = {.layers = 2};
    ppsim_kernels_fill_stage(&a, plain);
    ppsim_kernels_fill_stage(&b, over);
    ck_assert_int_gt(a.tp_comm_f_ps, 0);
    ck_assert_int_lt(b.tp_comm_f_ps, a.tp_comm_f_ps);
    ck_assert_int_lt(b.tp_comm_b_ps, a.tp_comm_b_ps);
    /* the rest of the forward is the same (to the picosecond rounding of the two sums) */
    ck_assert(llabs((a.est.f_ps - a.tp_comm_f_ps) - (b.est.f_ps - b.tp_comm_f_ps)) <= 2);
    /* without overlap: 2 layers x (2 all-gathers + 2 reduce-scatters) of 2 T h bytes, all
     * the same time */
    PpsimGpuSpec g;
    ppsim_kernels_gpu(&over->hardware, &g);
    double c = (double)a.tp_comm_f_ps / PPSIM_PS_PER_S / 8.0;
    double T = 4096, h = 8192, t = 8, f = 4 * h;
    double fwd = split8(&g, c, T, 3 * h / t, h) + pipe4(&g, c, T, h, h / t) +
                 split8(&g, c, T, f / t, h) + pipe4(&g, c, T, h, f / t);
    double bwd = split8(&g, c, T, h / t, h) + split8(&g, c, T, f / t, h);
    for (int i = 0; i < 2; i++) { /* QKV's and fc1's in bulk: beside their dgrad and wgrad */
        double n = i == 0 ? 3 * h / t : f / t;
        bwd += MAX(0.0, c - ppsim_gemm_seconds(&g, T, h, n, 1)) +
               MAX(0.0, c - ppsim_gemm_seconds(&g, h, n, T, 1));
    }
    ck_assert(llabs(b.tp_comm_f_ps - (PpsimTime)llround(2 * fwd * PPSIM_PS_PER_S)) <= 4);
    ck_assert(llabs(b.tp_comm_b_ps - (PpsimTime)llround(2 * bwd * PPSIM_PS_PER_S)) <= 4);
    /* pair by pair, not pooled: the projection's GEMM (h x h / t) is too short for its
     * reduce-scatter, which shows although the layer's GEMMs are longer than all four */
    PpsimTime g_all = a.kern_f_ps[PPSIM_KERN_GEMM];
    ck_assert_int_gt(g_all, a.tp_comm_f_ps);
    ck_assert(c > ppsim_gemm_seconds(&g, T, h, h / t, 1));
    ck_assert_int_gt(b.tp_comm_f_ps, (PpsimTime)(2 * 20 * g.launch_s * PPSIM_PS_PER_S) + 1000);
    /* without sequence parallelism there is nothing to split: a clear error naming where */
    const char *const nosp[] = {"parallel.tp_comm_overlap=true", "parallel.sequence_parallel=false",
                                NULL};
    g_autoptr(PpsimScenario) ar = parse(yaml, nosp, &error);
    ck_assert_ptr_null(ar);
    ck_assert_ptr_nonnull(error);
    ck_assert(g_str_has_prefix(error->message, "--set parallel.tp_comm_overlap: "));
    ck_assert_ptr_nonnull(strstr(error->message, "needs 'parallel.sequence_parallel: true'"));
    g_clear_error(&error);
    const char *in_file = "hardware: {preset: dgx-h100-80gb}\n"
                          "model: {layers: 8, hidden: 8192, heads: 64, seq_len: 4096}\n"
                          "parallel: {tp: 8, pp: 1, dp: 1, tp_comm_overlap: true}\n"
                          "training: {microbatches: 1}\n"
                          "schedule: 1f1b\n";
    g_autoptr(PpsimScenario) ar_file = parse(in_file, NULL, &error);
    ck_assert_ptr_null(ar_file);
    ck_assert(g_str_has_prefix(error->message, "t.yaml:3:"));
}
END_TEST

/* parallel.tp_async_backward (the default): a column-parallel linear (QKV, fc1) all-gathers
 * its saved input beside its dgrad GEMM and sends its input gradient beside its wgrad GEMM,
 * as Megatron-LM and Transformer Engine do; a row-parallel one's output gradient all-gather
 * shows whole. Without sp, only the column-parallel all-reduces, beside their wgrads. False:
 * every backward collective on the critical path, as before 2021-09. The forward is the
 * same either way. */
START_TEST(test_tp_async_backward)
{
    g_autoptr(GError) error = NULL;
    const char *yaml = "hardware: {preset: dgx-a100-80gb}\n"
                       "model: {layers: 8, hidden: 4096, heads: 32, seq_len: 2048}\n"
                       "parallel: {tp: 8, pp: 1, dp: 1, sequence_parallel: true}\n"
                       "training: {microbatches: 1}\n"
                       "schedule: 1f1b\n";
    const char *const off[] = {"parallel.tp_async_backward=false", NULL};
    const char *const ar[] = {"parallel.sequence_parallel=false", NULL};
    const char *const ar_off[] = {"parallel.sequence_parallel=false",
                                  "parallel.tp_async_backward=false", NULL};
    g_autoptr(PpsimScenario) on_sc = parse(yaml, NULL, &error);
    g_autoptr(PpsimScenario) off_sc = parse(yaml, off, &error);
    g_autoptr(PpsimScenario) ar_sc = parse(yaml, ar, &error);
    g_autoptr(PpsimScenario) ar_off_sc = parse(yaml, ar_off, &error);
    ppsim_assert_no_error(error);
    ck_assert(on_sc->parallel.tp_async_backward);
    PpsimStageCost on = {.layers = 1}, sync = {.layers = 1};
    PpsimStageCost aon = {.layers = 1}, async = {.layers = 1};
    ppsim_kernels_fill_stage(&on, on_sc);
    ppsim_kernels_fill_stage(&sync, off_sc);
    ppsim_kernels_fill_stage(&aon, ar_sc);
    ppsim_kernels_fill_stage(&async, ar_off_sc);
    ck_assert_int_eq(on.tp_comm_f_ps, sync.tp_comm_f_ps);
    ck_assert_int_eq(on.est.f_ps, sync.est.f_ps);
    /* synchronous: the forward's two all-gathers and two reduce-scatters again */
    ck_assert_int_eq(sync.tp_comm_b_ps, sync.tp_comm_f_ps);
    ck_assert_int_eq(async.tp_comm_b_ps, async.tp_comm_f_ps);
    /* asynchronous, by hand: c is one all-gather (= one reduce-scatter) */
    PpsimGpuSpec g;
    ppsim_kernels_gpu(&on_sc->hardware, &g);
    double c = (double)sync.tp_comm_f_ps / PPSIM_PS_PER_S / 4.0;
    double T = 2048, h = 4096, t = 8, in[2] = {3 * h / t, 4 * h / t}, want = 0.0;
    for (int i = 0; i < 2; i++)
        want += c + MAX(0.0, c - ppsim_gemm_seconds(&g, T, h, in[i], 1)) +
                MAX(0.0, c - ppsim_gemm_seconds(&g, h, in[i], T, 1));
    ck_assert(llabs(on.tp_comm_b_ps - (PpsimTime)llround(want * PPSIM_PS_PER_S)) <= 2);
    ck_assert_int_lt(on.tp_comm_b_ps, sync.tp_comm_b_ps);
    /* without sp: one all-reduce (the forward's two, halved) beside each column wgrad */
    double car = (double)async.tp_comm_f_ps / PPSIM_PS_PER_S / 2.0, want_ar = 0.0;
    for (int i = 0; i < 2; i++)
        want_ar += MAX(0.0, car - ppsim_gemm_seconds(&g, h, in[i], T, 1));
    ck_assert(llabs(aon.tp_comm_b_ps - (PpsimTime)llround(want_ar * PPSIM_PS_PER_S)) <= 2);
    /* the LM head is column-parallel too: its input gradient beside its wgrad */
    PpsimStageCost head_on = {.layers = 1, .has_head = TRUE};
    PpsimStageCost head_off = {.layers = 1, .has_head = TRUE};
    ppsim_kernels_fill_stage(&head_on, on_sc);
    ppsim_kernels_fill_stage(&head_off, off_sc);
    double V = on_sc->model.vocab;
    double head = MAX(0.0, c - ppsim_gemm_seconds(&g, h, V / t, T, 1));
    ck_assert(llabs((head_on.tp_comm_b_ps - on.tp_comm_b_ps) -
                    (PpsimTime)llround(head * PPSIM_PS_PER_S)) <= 2);
    ck_assert(llabs((head_off.tp_comm_b_ps - sync.tp_comm_b_ps) -
                    (PpsimTime)llround(c * PPSIM_PS_PER_S)) <= 2);
}
END_TEST

Suite *
ppsim_test_suite(void)
{
    Suite *s = suite_create("kernels");
    TCase *tc = tcase_create("kernels");
    tcase_add_test(tc, test_quantization);
    tcase_add_test(tc, test_roofline_switch);
    tcase_add_test(tc, test_k_overhead);
    tcase_add_test(tc, test_causal_halving);
    tcase_add_test(tc, test_sliding_window);
    tcase_add_test(tc, test_sliding_window_errors);
    tcase_add_test(tc, test_attention_kernels);
    tcase_add_test(tc, test_optimizer_and_fa1);
    tcase_add_test(tc, test_hbm_variant_presets);
    tcase_add_test(tc, test_cross_entropy_bytes);
    tcase_add_test(tc, test_cross_entropy_impls);
    tcase_add_test(tc, test_dropout_rotary);
    tcase_add_test(tc, test_eager_elementwise);
    tcase_add_test(tc, test_head_dim);
    tcase_add_test(tc, test_mla);
    tcase_add_test(tc, test_collectives);
    tcase_add_test(tc, test_efficiency_override);
    tcase_add_test(tc, test_breakdown_sums);
    tcase_add_test(tc, test_bad_input);
    tcase_add_test(tc, test_context_parallel);
    tcase_add_test(tc, test_tp_overlap);
    tcase_add_test(tc, test_tp_async_backward);
    tcase_add_test(tc, test_fp8);
    tcase_add_test(tc, test_fp8_kernels);
    tcase_add_test(tc, test_fp8_current_scaling);
    tcase_add_test(tc, test_fp8_block_scaling);
    suite_add_tcase(s, tc);
    return s;
}
