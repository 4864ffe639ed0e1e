/* check-moe.c: mixture-of-experts layers and expert parallelism (src/cost/moe.h) against hand
 * counts: the DeepSeek-V3, Mixtral and Qwen3 presets' parameter counts ([DSV3] 671B / 37B
 * active, [MIXTRAL] 47B / 13B, [MEG-QWEN3] by hand), one MoE layer's FLOP and all-to-all time, its
 * kernels (router, permutation, grouped expert GEMMs) under the kernel model, the load factors,
 * dense layers, the scenario rules, the JSON keys of an F&B schedule (ep_comm, fb_hidden,
 * ep_comm_hidden), and the all-to-alls as flows on the NIC, alone and beside pipeline sends. */
#include "ppsim-test.h"
#include "cost/moe.h"
#include "cost/memory.h"
#include "cost/kernels.h"
#include "cost/overlap.h"
#include "report/report.h"
#include "util/ppsim-error.h"

#include <math.h>
#include <string.h>

static PpsimScenario *
parse(const char *yaml, const char *const *overrides, GError **error)
{
    return ppsim_scenario_parse(yaml, strlen(yaml), "t.yaml", ".", overrides, error);
}

/* Published totals: DeepSeek-V3 671B with 37B activated per token ([DSV3] abstract, the MTP
 * module left out as there), by hand from §4.2's shapes with MLA; Mixtral 8x7B 46.7B with
 * 12.9B active ([MIXTRAL] §2). */
START_TEST(test_preset_params)
{
    const PpsimModelPreset *ds = ppsim_model_preset_lookup("deepseek-v3");
    ck_assert(ds != NULL);
    double total = 0, active = 0;
    ppsim_moe_model_params(&ds->model, &total, &active);
    {
        /* MLA a layer: the query down-projection h x 1536 and its norm, the up-projection
         * to 128 heads of 128 + 64; the KV down-projection h x (512 + 64) and its norm, the
         * up-projection to 128 keys and values of 128; the output 128 x 128 x h. Dense
         * layers (3) FFN 18,432; MoE layers (58) 256 routed + 1 shared experts of 2,048,
         * 8 + 1 a token, router h x 256; two norms a layer; embedding, untied head, final
         * norm. */
        double h = 7168, V = 129280;
        double mla =
            h * 1536 + 1536 + 1536 * 128 * 192 + h * 576 + 512 + 512 * 128 * 256 + 128 * 128 * h;
        double dense = mla + 3 * h * 18432 + 2 * h, moe = mla + h * 256 + 2 * h;
        double ends = 2 * V * h + h + 3 * dense + 58 * moe;
        ck_assert_double_eq_tol(total, ends + 58 * 257 * 3 * h * 2048, 1);
        ck_assert_double_eq_tol(active, ends + 58 * 9 * 3 * h * 2048, 1);
        ck_assert_double_eq(total, 671026404352.0);
    }
    ck_assert_msg(fabs(total / 671e9 - 1) < 0.001, "total %.4g", total);
    ck_assert_msg(fabs(active / 37e9 - 1) < 0.02, "active %.4g", active);
    const PpsimModelPreset *mx = ppsim_model_preset_lookup("mixtral-8x7b");
    ck_assert(mx != NULL);
    ppsim_moe_model_params(&mx->model, &total, &active);
    ck_assert_msg(fabs(total / 46.7e9 - 1) < 0.01, "total %.4g", total);
    ck_assert_msg(fabs(active / 12.9e9 - 1) < 0.01, "active %.4g", active);
    /* Mixtral 8x22B ([MIXTRAL-8X22B]), by hand: embedding and untied head 2 V h, final norm
     * h, per layer attention 2 h^2 + 2 h (h / 6) (8 of 48 heads for K and V), two norms, the
     * router h E and E = 8 experts of 3 h f (2 of them per token): 140,620,634,112 in all
     * (the model card's 141B), 39.2B active (its 39B) */
    const PpsimModelPreset *m22 = ppsim_model_preset_lookup("mixtral-8x22b");
    ck_assert(m22 != NULL);
    {
        double h = 6144, f = 16384, V = 32000, L = 56;
        double per = 2 * h * h + 2 * h * (h / 6) + 2 * h + 8 * h;
        ppsim_moe_model_params(&m22->model, &total, &active);
        ck_assert_double_eq_tol(total, 2 * V * h + h + L * (per + 8 * 3 * h * f), 1);
        ck_assert_double_eq(total, 140620634112.0);
        ck_assert_double_eq_tol(active, 2 * V * h + h + L * (per + 2 * 3 * h * f), 1);
        ck_assert_msg(fabs(active / 39e9 - 1) < 0.01, "active %.4g", active);
    }
    /* Grok-1 ([GROK1-REPO]) as Mixtral's shape: 64 layers of 6144, 48 heads (8 for K and
     * V), 8 experts of 32,768, vocabulary 131,072, the head tied to the embedding:
     * 315,684,034,560 (its "314B"), and one V x h more untied */
    const PpsimModelPreset *grok = ppsim_model_preset_lookup("grok-1");
    ck_assert(grok != NULL);
    {
        double h = 6144, f = 32768, V = 131072, L = 64;
        double per = 2 * h * h + 2 * h * (h / 6) + 2 * h + 8 * h;
        ppsim_moe_model_params(&grok->model, &total, &active);
        ck_assert_double_eq(total, 315684034560.0);
        ck_assert_double_eq_tol(total, V * h + h + L * (per + 8 * 3 * h * f), 1);
        ck_assert_double_eq_tol(active, V * h + h + L * (per + 2 * 3 * h * f), 1);
        ck_assert_msg(fabs(total / 314e9 - 1) < 0.01, "total %.4g", total);
        PpsimModel untied = grok->model;
        untied.tied_embeddings = FALSE;
        double total_untied = 0;
        ppsim_moe_model_params(&untied, &total_untied, &active);
        ck_assert_double_eq(total_untied - total, V * h);
    }
    /* Qwen3 ([MEG-QWEN3]): by hand, embedding and untied head 2 V h, final norm h, per layer
     * QKV h (q + 2kv) and output q h with q = 32 (64) heads x 128 and kv = 4 x 128, two norms,
     * 128 experts of 3 h fe and the router h E; a token passes 8 experts. The names say 30B
     * (3B active) and 235B (22B). */
    const char *qn[] = {"qwen3-30b-a3b", "qwen3-235b-a22b"};
    const double ql[] = {48, 94}, qh[] = {2048, 4096}, qa[] = {32, 64}, qfe[] = {768, 1536};
    const double qt[] = {30e9, 235e9}, qact[] = {3e9, 22e9};
    for (int i = 0; i < 2; i++) {
        const PpsimModelPreset *q = ppsim_model_preset_lookup(qn[i]);
        ck_assert(q != NULL);
        double h = qh[i], qw = qa[i] * 128, kv = 4 * 128, V = 151936, fe = qfe[i];
        double attn = h * (qw + 2 * kv) + qw * h + 2 * h;
        double want = 2 * V * h + h + ql[i] * (attn + 128 * 3 * h * fe + h * 128);
        double want_a = 2 * V * h + h + ql[i] * (attn + 8 * 3 * h * fe + h * 128);
        ppsim_moe_model_params(&q->model, &total, &active);
        ck_assert_double_eq_tol(total, want, 1);
        ck_assert_double_eq_tol(active, want_a, 1);
        ck_assert_msg(fabs(total / qt[i] - 1) < 0.02, "total %.4g", total);
        ck_assert_msg(fabs(active / qact[i] - 1) < 0.12, "active %.4g", active);
    }
    /* GPT-OSS 120B ([GPT-OSS]: 116.8B parameters): by hand, embedding and untied head 2 V h,
     * final norm h, per layer QKV h (64 x 64 + 2 x 8 x 64), output 4096 h, two norms, 128
     * experts of 3 h 2880 and the router h 128; a token passes 4 experts. Every other layer
     * (1-based numbers 1, 3, ...) attends through a 128-token window. */
    const PpsimModelPreset *oss = ppsim_model_preset_lookup("gpt-oss-120b");
    ck_assert(oss != NULL);
    {
        double h = 2880, V = 201088, attn = h * (4096 + 2 * 512) + 4096 * h + 2 * h;
        ppsim_moe_model_params(&oss->model, &total, &active);
        ck_assert_double_eq_tol(total, 2 * V * h + h + 36 * (attn + 128 * 3 * h * h + h * 128), 1);
        ck_assert_double_eq_tol(active, 2 * V * h + h + 36 * (attn + 4 * 3 * h * h + h * 128), 1);
        ck_assert_msg(fabs(total / 116.8e9 - 1) < 0.001, "total %.6g", total);
        ck_assert_int_eq(oss->model.sliding_window, 128);
        ck_assert_int_eq(ppsim_model_window_layers_in(&oss->model, 0, 36), 18);
        ck_assert_int_eq(ppsim_model_window_layers_in(&oss->model, 0, 9), 5);
        /* GPT-OSS 20B: 24 such layers of 32 experts, 20.9B ([GPT-OSS]) */
        const PpsimModelPreset *oss20 = ppsim_model_preset_lookup("gpt-oss-20b");
        ck_assert(oss20 != NULL);
        ppsim_moe_model_params(&oss20->model, &total, &active);
        ck_assert_double_eq_tol(total, 2 * V * h + h + 24 * (attn + 32 * 3 * h * h + h * 32), 1);
        ck_assert_double_eq_tol(active, 2 * V * h + h + 24 * (attn + 4 * 3 * h * h + h * 32), 1);
        ck_assert_msg(fabs(total / 20.9e9 - 1) < 0.001, "total %.6g", total);
    }
    ck_assert_int_eq(ppsim_moe_layers_in(&ds->model, 0, 61), 58);
    ck_assert_int_eq(ppsim_moe_layers_in(&ds->model, 0, 3), 0);
    ck_assert_int_eq(ppsim_moe_layers_in(&ds->model, 2, 4), 3);
}
END_TEST

static const char moe_yaml[] = "name: moe\n"
                               "hardware: {preset: dgx-h100-80gb}\n"
                               "model: {mlp: swiglu, layers: 8, hidden: 1024, ffn_hidden: 4096,\n"
                               "        heads: 8, seq_len: 1024, vocab: 32000,\n"
                               "        moe: {experts: 16, top_k: 2, expert_ffn_hidden: 512,\n"
                               "              shared_experts: 1, dense_layers: 2}}\n"
                               "parallel: {tp: 1, pp: 2, dp: 16, ep: 16, placement: tp-pp-dp}\n"
                               "training: {microbatches: 8}\n"
                               "schedule: dualpipev\n";

static PpsimCosts *
moe_costs(const char *const *overrides, int stages)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc = parse(moe_yaml, overrides, &error);
    ppsim_assert_no_error(error);
    PpsimCosts *c = ppsim_costs_new(sc, stages, &error);
    ppsim_assert_no_error(error);
    return c;
}

/* The kernel model's view of moe_yaml's GPU (the H100 preset). */
static PpsimGpuSpec
moe_gpu(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc = parse(moe_yaml, NULL, &error);
    ppsim_assert_no_error(error);
    PpsimGpuSpec g;
    ppsim_kernels_gpu(&sc->hardware, &g);
    return g;
}

/* One stage of two layers (dense_layers 2 puts layers 0-1 dense; a 4-stage split gives
 * stage 1 layers 2-3, both MoE, stage 0 layers 0-1, both dense). Per MoE layer, T = 1024
 * tokens, with hardware.gpu.efficiency set (the closed form, every op FLOPs / (peak x
 * efficiency)): FFN FLOPs change from 6 T h f to 6 T h fe (top_k + shared) + 2 T h E; the
 * all-to-alls: 2 in F, each sending T k h 2 bytes, 1/16 to each rank: 16 ranks spaced 2
 * GPUs apart span 4 nodes, 4 on each, so 12/16 of the bytes go through the NIC at 50 GB/s
 * (plus 5 us) and, beside them, 3/16 over NVLink to the node's other 3 ranks (moe.h). */
static const char *closed_form = "hardware.gpu.efficiency=0.5";

START_TEST(test_layer_by_hand)
{
    const char *cf[] = {closed_form, NULL};
    const char *dense_set[] = {closed_form, "model.moe.dense_layers=8", "parallel.ep=1", NULL};
    g_autoptr(PpsimCosts) moe = moe_costs(cf, 4);
    g_autoptr(PpsimCosts) dense = moe_costs(dense_set, 4);
    double T = 1024, h = 1024, f = 4096, fe = 512, E = 16;
    double d_flops = 2 * ((2 + 1) * 6 * T * h * fe + 2 * T * h * E - 6 * T * h * f);
    /* stage 0 is dense either way */
    ck_assert_int_eq(moe->stage[0].est.f_ps, dense->stage[0].est.f_ps);
    ck_assert_int_eq(moe->stage[0].ep_comm_f_ps, 0);
    ck_assert_double_eq_tol(moe->stage[1].fwd_flops - dense->stage[1].fwd_flops, d_flops, 1);
    double bytes = T * 2 * h * 2 * 12.0 / 16, near = T * 2 * h * 2 * 3.0 / 16;
    PpsimTime a2a = ppsim_time_from_seconds(bytes / 50e9) + 5 * PPSIM_PS_PER_US;
    PpsimTime nv = ppsim_time_from_seconds(near / 450e9) + 2 * PPSIM_PS_PER_US;
    ck_assert_int_lt(nv, a2a); /* the NIC's share sets the pace */
    ck_assert_int_eq(moe->stage[1].ep_comm_f_ps, 2 * 2 * a2a);
    ck_assert_int_eq(moe->stage[1].ep_comm_b_ps, 2 * 2 * a2a);
    ck_assert_uint_eq(moe->stage[1].ep_bytes_f, (guint64)llround(2 * 2 * bytes));
    ck_assert_uint_eq(moe->stage[1].ep_near_bytes_f, (guint64)llround(2 * 2 * near));
    /* 8 ranks on one node (ep 8, tp-dp-pp placement: dp replicas adjacent): 7/8 of the bytes
     * over NVLink, none through the NIC; under the kernel model at NCCL's bus bandwidth (the
     * H100's NVLink 0.82 of 450 GB/s), the replay's flows carrying what the line rate moves
     * in that time */
    const char *in_node[] = {"parallel.ep=8", "parallel.placement=tp-dp-pp", NULL};
    const char *in_node_cf[] = {closed_form, "parallel.ep=8", "parallel.placement=tp-dp-pp", NULL};
    for (int k = 0; k < 2; k++) {
        g_autoptr(PpsimCosts) nvl = moe_costs(k ? in_node_cf : in_node, 4);
        double all = T * 2 * h * 2, eff = k ? 1.0 : 0.82;
        ck_assert_uint_eq(nvl->stage[1].ep_bytes_f, (guint64)llround(2 * 2 * all * 7 / 8 / eff));
        ck_assert_uint_eq(nvl->stage[1].ep_near_bytes_f, 0);
        ck_assert_int_eq(
            nvl->stage[1].ep_comm_f_ps,
            2 * 2 * (ppsim_time_from_seconds(all * 7 / 8 / (450e9 * eff)) + 2 * PPSIM_PS_PER_US));
    }
    /* DeepEP's dispatch (parallel.ep_dispatch: deepep): a token crosses the network once to
     * each other node holding any of its 2 experts. The 16 ranks span 4 nodes of 4 experts:
     * a node holds none of a token's two with probability (12/16)(11/15) = 0.55, so 3 x 0.45
     * = 1.35 copies a token through the NIC (the all-to-all's 2 x 12/16 = 1.5), and NVLink
     * forwards a copy to each GPU holding one but the receiving one of each node: 12 x 2/16
     * = 1.5 copies, 3/4 of the 2 (with one expert a GPU no GPU holds two) */
    const char *deep[] = {closed_form, "parallel.ep_dispatch=deepep", NULL};
    g_autoptr(PpsimCosts) dee = moe_costs(deep, 4);
    double tok = T * h * 2, dfar = tok * 3 * (1 - 12.0 / 16 * 11 / 15), dnear = 2 * tok * 3 / 4;
    PpsimTime da2a = ppsim_time_from_seconds(dfar / 50e9) + 5 * PPSIM_PS_PER_US;
    ck_assert_int_lt(ppsim_time_from_seconds(dnear / 450e9) + 2 * PPSIM_PS_PER_US, da2a);
    ck_assert_int_eq(dee->stage[1].ep_comm_f_ps, 2 * 2 * da2a);
    ck_assert_int_eq(dee->stage[1].ep_comm_b_ps, 2 * 2 * da2a);
    ck_assert_uint_eq(dee->stage[1].ep_bytes_f, (guint64)llround(2 * 2 * dfar));
    ck_assert_uint_eq(dee->stage[1].ep_near_bytes_f, (guint64)llround(2 * 2 * dnear));
    ck_assert_int_eq(dee->stage[1].est.w_ps, moe->stage[1].est.w_ps); /* compute unchanged */
    /* group-limited routing (model.moe.groups, group_top_k): a token's 2 experts from 2 of 4
     * groups of 4, a node's experts one group. A node is used with probability 2/4, then
     * holds one of the 2 drawn from the 8 of the token's groups with 1 - (4/8)(3/7): 3 x
     * 0.393 = 1.18 copies through the NIC. A GPU's one expert is drawn with the same 2/16
     * as before: NVLink unchanged. With 4 of 8 groups of 2 a node holds 2 whole groups, j of
     * them used with C(2,j)C(6,4-j)/C(8,4) = 15, 40, 15 of 70, and misses the 2 drawn from
     * the token's 8 experts with 1, (6/8)(5/7), (4/8)(3/7): 3 x 0.434 copies. */
    struct {
        const char *groups, *top;
        double p_node;
    } lim[] = {{"model.moe.groups=4", "model.moe.group_top_k=2", 0.5 * (1 - 4.0 / 8 * 3 / 7)},
               {"model.moe.groups=8", "model.moe.group_top_k=4",
                1 - (15.0 + 40.0 * 30 / 56 + 15.0 * 12 / 56) / 70}};
    for (int i = 0; i < 2; i++) {
        const char *const o[] = {closed_form, "parallel.ep_dispatch=deepep", lim[i].groups,
                                 lim[i].top, NULL};
        g_autoptr(PpsimCosts) gl = moe_costs(o, 4);
        double gfar = tok * 3 * lim[i].p_node;
        ck_assert_uint_eq(gl->stage[1].ep_bytes_f, (guint64)llround(2 * 2 * gfar));
        ck_assert_uint_eq(gl->stage[1].ep_near_bytes_f, (guint64)llround(2 * 2 * dnear));
        ck_assert_int_eq(gl->stage[1].ep_comm_f_ps,
                         2 * 2 * (ppsim_time_from_seconds(gfar / 50e9) + 5 * PPSIM_PS_PER_US));
    }
    /* parallel.ep_fp8_dispatch: each pass's dispatch-direction all-to-all carries FP8 values
     * and an fp32 scale per 128, (1 + 4/128) / 2 of the 16-bit bytes; the other stays
     * 16-bit. Per F (two MoE layers): two pairs of one of each; B alike. FP8 GEMMs change
     * the compute, so only the all-to-alls are compared, against BF16 dispatch in FP8. */
    const char *const f8[] = {closed_form, "parallel.ep_dispatch=deepep", "training.dtype=fp8",
                              "parallel.ep_fp8_dispatch=true", NULL};
    const char *const f16[] = {closed_form, "parallel.ep_dispatch=deepep", "training.dtype=fp8",
                               NULL};
    g_autoptr(PpsimCosts) d8 = moe_costs(f8, 4);
    g_autoptr(PpsimCosts) d16 = moe_costs(f16, 4);
    double w8 = (1 + 4.0 / 128) / 2;
    PpsimTime da2a8 = ppsim_time_from_seconds(dfar * w8 / 50e9) + 5 * PPSIM_PS_PER_US;
    ck_assert_int_eq(d16->stage[1].ep_comm_f_ps, 2 * 2 * da2a);
    ck_assert_int_eq(d8->stage[1].ep_comm_f_ps, 2 * (da2a + da2a8));
    ck_assert_int_eq(d8->stage[1].ep_comm_b_ps, 2 * (da2a + da2a8));
    ck_assert_uint_eq(d8->stage[1].ep_bytes_f, (guint64)llround(2 * (1 + w8) * dfar));
    ck_assert_uint_eq(d8->stage[1].ep_near_bytes_f, (guint64)llround(2 * (1 + w8) * dnear));
    /* without DeepEP, or in BF16, an error naming the key */
    const char *const bad[][3] = {
        {"parallel.ep_fp8_dispatch=true", "training.dtype=fp8", NULL},
        {"parallel.ep_fp8_dispatch=true", "parallel.ep_dispatch=deepep", NULL}};
    for (int i = 0; i < 2; i++) {
        g_autoptr(GError) err = NULL;
        g_autoptr(PpsimScenario) no = parse(moe_yaml, bad[i], &err);
        ck_assert_ptr_null(no);
        ck_assert_ptr_nonnull(strstr(err->message, "parallel.ep_fp8_dispatch"));
    }
    /* NCCL's all-to-all sends every copy whatever the routing */
    const char *const a2a_lim[] = {closed_form, "model.moe.groups=4", "model.moe.group_top_k=2",
                                   NULL};
    g_autoptr(PpsimCosts) al = moe_costs(a2a_lim, 4);
    ck_assert_int_eq(al->stage[1].ep_comm_f_ps, moe->stage[1].ep_comm_f_ps);
    /* inside one node DeepEP sends a token once to each other GPU holding any of its two
     * experts: 8 GPUs of 2 experts, a GPU holds neither with probability (14/16)(13/15), so
     * 7 x (1 - 0.758) = 1.69 copies a token over NVLink, where the all-to-all sends 2 x 7/8
     * = 1.75 (one expert a GPU, as in the 16-rank case above, the two counts agree) */
    const char *deep_in[] = {closed_form, "parallel.ep=8", "parallel.placement=tp-dp-pp",
                             "parallel.ep_dispatch=deepep", NULL};
    g_autoptr(PpsimCosts) dee_in = moe_costs(deep_in, 4);
    double in_near = tok * 7 * (1 - 14.0 / 16 * 13 / 15);
    ck_assert_int_eq(dee_in->stage[1].ep_comm_f_ps,
                     2 * 2 * (ppsim_time_from_seconds(in_near / 450e9) + 2 * PPSIM_PS_PER_US));
    ck_assert_uint_eq(dee_in->stage[1].ep_bytes_f, (guint64)llround(2 * 2 * in_near));
    ck_assert_uint_eq(dee_in->stage[1].ep_near_bytes_f, 0);
    /* F grows by the FLOP difference at the GPU's rate plus the all-to-alls; W by the FLOPs */
    PpsimTime dw = moe->stage[1].est.w_ps - dense->stage[1].est.w_ps;
    PpsimTime df = moe->stage[1].est.f_ps - dense->stage[1].est.f_ps - moe->stage[1].ep_comm_f_ps;
    ck_assert_int_eq(df, dw);
    ck_assert(df < 0); /* 3 experts of 512 are less work than one FFN of 4096 */
    ck_assert(llabs(dw - ppsim_time_from_seconds(d_flops / (989e12 * 0.5))) <= 2);
    /* routed experts: 16 / ep = 1 per GPU, plus the shared one and the router */
    double d_params = 2 * ((1 + 1) * 3 * h * fe + h * E - 3 * h * f);
    ck_assert_double_eq_tol(moe->stage[1].params - dense->stage[1].params, d_params, 1e-3);
}
END_TEST

/* Context parallelism (cp = 2) halves each GPU's tokens (T' = 512 of the 1024): its
 * all-to-alls carry T' k h 2 bytes, its MoE activations and its share of the FLOPs halve,
 * while the tp x cp group's FLOPs (fwd_flops) are the sequence's. Here dp 8 and ep 8 under
 * tp-dp-pp: EP ranks 2 GPUs apart (cp 2 inside each replica), 4 a node over 2 nodes, so 4/8
 * of the bytes cross the NIC and 3/8 go over NVLink; in the closed form and, for the
 * all-to-all (moe.c's either way, the NCCL time at the NIC's 0.92 bus efficiency), under
 * the kernel model. */
START_TEST(test_context_parallel)
{
    const char *cp2[] = {closed_form,
                         "parallel.cp=2",
                         "parallel.dp=8",
                         "parallel.ep=8",
                         "parallel.placement=tp-dp-pp",
                         NULL};
    const char *cp2_dense[] = {closed_form,
                               "parallel.cp=2",
                               "parallel.dp=8",
                               "parallel.ep=1",
                               "parallel.placement=tp-dp-pp",
                               "model.moe.dense_layers=8",
                               NULL};
    const char *cf[] = {closed_form, NULL};
    const char *dense_set[] = {closed_form, "model.moe.dense_layers=8", "parallel.ep=1", NULL};
    g_autoptr(PpsimCosts) moe = moe_costs(cp2, 4);
    g_autoptr(PpsimCosts) dense = moe_costs(cp2_dense, 4);
    g_autoptr(PpsimCosts) moe1 = moe_costs(cf, 4);
    g_autoptr(PpsimCosts) dense1 = moe_costs(dense_set, 4);
    double T = 1024, h = 1024, f = 4096, fe = 512, E = 16, Tn = T / 2;
    double d_flops = 2 * ((2 + 1) * 6 * T * h * fe + 2 * T * h * E - 6 * T * h * f);
    ck_assert_double_eq_tol(moe->stage[1].fwd_flops - dense->stage[1].fwd_flops, d_flops, 1);
    PpsimTime dw = moe->stage[1].est.w_ps - dense->stage[1].est.w_ps;
    ck_assert(llabs(dw - ppsim_time_from_seconds(d_flops / 2 / (989e12 * 0.5))) <= 2);
    double far = Tn * 2 * h * 2 * 4.0 / 8, near = Tn * 2 * h * 2 * 3.0 / 8;
    PpsimTime a2a = ppsim_time_from_seconds(far / 50e9) + 5 * PPSIM_PS_PER_US;
    ck_assert_int_eq(moe->stage[1].ep_comm_f_ps, 2 * 2 * a2a);
    ck_assert_uint_eq(moe->stage[1].ep_bytes_f, (guint64)llround(2 * 2 * far));
    ck_assert_uint_eq(moe->stage[1].ep_near_bytes_f, (guint64)llround(2 * 2 * near));
    /* the MoE layers' activations over the dense ones', per GPU: half of cp = 1's */
    gint64 d_act = moe->stage[1].est.act - dense->stage[1].est.act;
    gint64 d_act1 = moe1->stage[1].est.act - dense1->stage[1].est.act;
    ck_assert(llabs(d_act1) > 1000000); /* 3 experts of 512 keep less than one FFN of 4096 */
    ck_assert(llabs(2 * d_act - d_act1) <= 2);
    /* the kernel model: the same bytes, at NCCL's bus bandwidth through the NIC */
    g_autoptr(PpsimCosts) k = moe_costs(cp2 + 1, 4);
    ck_assert_uint_eq(k->stage[1].ep_bytes_f, (guint64)llround(2 * 2 * far / 0.92));
    ck_assert_int_eq(k->stage[1].ep_comm_f_ps,
                     2 * 2 * (ppsim_time_from_seconds(far / (50e9 * 0.92)) + 5 * PPSIM_PS_PER_US));
}
END_TEST

/* ZeRO shards the routed experts' gradients and optimizer states over the ranks that hold
 * the same experts, dp x cp / ep (Megatron-Core's expert-data-parallel group), the rest over
 * dp x cp. moe_yaml with ZeRO-1: dp 16, ep 16, so each GPU keeps the whole optimizer state
 * of its one local expert a layer (2 layers of 3 h fe) and 1/16 of everything else; with
 * ep 4 (4 local experts a layer), 1/4 of its experts'. The optimizer step covers that shard;
 * the DP reduction leaves out the experts' gradients when no other rank holds them. */
START_TEST(test_expert_shards)
{
    double h = 1024, fe = 512, routed = 2 * 3 * h * fe;
    const char *z1[] = {"parallel.zero=1", NULL};
    const char *z1_ep4[] = {"parallel.zero=1", "parallel.ep=4", NULL};
    g_autoptr(PpsimCosts) a = moe_costs(z1, 4);
    g_autoptr(PpsimCosts) b = moe_costs(z1_ep4, 4);
    const PpsimStageCost *s = &a->stage[1], *s4 = &b->stage[1];
    ck_assert_double_eq_tol(s->expert_params, routed, 1e-6);
    ck_assert_double_eq_tol(s4->expert_params, 4 * routed, 1e-6);
    /* the default 18 bytes a parameter: bf16 weights 2, fp32 gradients 4 and the optimizer's
     * K = 12 (fp32 master weights and Adam's two moments), sharded */
    double K = 12.0;
    ck_assert_double_eq_tol(s->opt_mem, (s->params - routed) * K / 16 + routed * K, 1e-3);
    ck_assert_double_eq_tol(s4->opt_mem, (s4->params - 4 * routed) * K / 16 + 4 * routed * K / 4,
                            1e-3);
    ck_assert_double_eq_tol(s->grads_mem, s->params * 4.0, 1e-3); /* ZeRO-1: whole */
    /* the optimizer step: 34 bytes a parameter of the local shard, one memory-bound pass */
    PpsimGpuSpec g = moe_gpu();
    double shard = (s->params - routed) / 16 + routed;
    ck_assert(
        llabs(s->opt_ps - ppsim_time_from_seconds(34.0 * shard / (g.hbm_bytes_per_s * g.mem_eff) +
                                                  2 * g.launch_s)) <= 2);
    /* the DP ring (closed form, nothing hidden): with ep 16 no other rank holds a GPU's
     * experts, so their gradients are not reduced; with ep 4, 4 ranks reduce them, (3/4) /
     * (15/16) = 0.8 of the bytes a parameter of the 16-rank ring */
    const char *c16[] = {closed_form, "parallel.zero=1", NULL};
    const char *c4[] = {closed_form, "parallel.zero=1", "parallel.ep=4", NULL};
    g_autoptr(PpsimCosts) r16 = moe_costs(c16, 4);
    g_autoptr(PpsimCosts) r4 = moe_costs(c4, 4);
    const PpsimStageCost *q = &r16->stage[1], *q4 = &r4->stage[1];
    ck_assert_uint_gt(q->dp_bytes, 0);
    double per_param = (double)q->dp_bytes / (q->params - routed);
    ck_assert_double_eq_tol((double)q4->dp_bytes,
                            per_param * (q4->params - 4 * routed + 0.8 * 4 * routed), 2);
    /* a dense stage holds no experts */
    ck_assert(a->stage[0].expert_params == 0);
    /* ZeRO-3 gathers an MoE layer whole: attention 4 h^2 (8 heads, 8 KV heads), two norms,
     * the router h E, the shared expert and the GPU's one local expert, 3 h fe each; the
     * stage holds that and the next one gathered, 2 bytes a parameter, beyond its shards (the
     * dense parameters' 1/16, its experts' whole: no other rank holds them) */
    const char *z3[] = {"parallel.zero=3", NULL};
    g_autoptr(PpsimCosts) c3 = moe_costs(z3, 4);
    double unit = 4 * h * h + 2 * h + h * 16 + 2 * 3 * h * fe;
    ck_assert_double_eq_tol(c3->stage[1].unit_params, unit, 1e-3);
    ck_assert_double_eq_tol(c3->stage[1].weights_mem,
                            (c3->stage[1].params - routed) * 2 / 16 + routed * 2 + 4 * unit, 1e-3);
}
END_TEST

/* The same layers under the kernel model, kernel by kernel against the dense stage (two
 * layers): the router GEMM (T x E x h) and its softmax and top-k over fp32 scores, the
 * permutation (k T h gathered, the probability-weighted sum back: 2 x 2 k T h + 2 (k T h +
 * T h) bytes; one local expert, so no sort), the local expert's GEMMs over its S = k T = 2048
 * slots and the activation over S fe, the shared expert as a dense MLP of 512, in place of
 * the dense MLP's two GEMMs and activation. With two local experts (ep 8) the grouped GEMMs
 * run 2 experts of 1024 slots each and the sort by local expert adds 2 x 2 S h bytes. */
START_TEST(test_layer_kernels)
{
    const char *dense_set[] = {"model.moe.dense_layers=8", "parallel.ep=1", NULL};
    g_autoptr(PpsimCosts) moe = moe_costs(NULL, 4);
    g_autoptr(PpsimCosts) dense = moe_costs(dense_set, 4);
    PpsimGpuSpec g = moe_gpu();
    double T = 1024, h = 1024, f = 4096, fe = 512, E = 16, k = 2, S = k * T, EL = 2;
    double perm = 2 * EL * k * T * h + EL * (k * T * h + T * h);
    double fwd = ppsim_gemm_seconds(&g, T, E, h, 1) + 2 * ppsim_mem_seconds(&g, 8 * T * E) +
                 ppsim_mem_seconds(&g, perm) + ppsim_gemm_seconds(&g, S, 2 * fe, h, 1) +
                 ppsim_gemm_seconds(&g, S, h, fe, 1) + ppsim_mem_seconds(&g, 3 * EL * S * fe) +
                 ppsim_gemm_seconds(&g, T, 2 * fe, h, 1) + ppsim_gemm_seconds(&g, T, h, fe, 1) +
                 ppsim_mem_seconds(&g, 3 * EL * T * fe) - ppsim_gemm_seconds(&g, T, 2 * f, h, 1) -
                 ppsim_gemm_seconds(&g, T, h, f, 1) - ppsim_mem_seconds(&g, 3 * EL * T * f);
    double wgt = ppsim_gemm_seconds(&g, h, E, T, 1) + ppsim_gemm_seconds(&g, h, 2 * fe, S, 1) +
                 ppsim_gemm_seconds(&g, fe, h, S, 1) + ppsim_gemm_seconds(&g, h, 2 * fe, T, 1) +
                 ppsim_gemm_seconds(&g, fe, h, T, 1) - ppsim_gemm_seconds(&g, h, 2 * f, T, 1) -
                 ppsim_gemm_seconds(&g, f, h, T, 1);
    PpsimTime df = moe->stage[1].est.f_ps - moe->stage[1].ep_comm_f_ps - dense->stage[1].est.f_ps;
    PpsimTime dw = moe->stage[1].est.w_ps - dense->stage[1].est.w_ps;
    ck_assert_msg(llabs(df - ppsim_time_from_seconds(2 * fwd)) <= 2, "%" G_GINT64_FORMAT, df);
    ck_assert_msg(llabs(dw - ppsim_time_from_seconds(2 * wgt)) <= 2, "%" G_GINT64_FORMAT, dw);
    /* the breakdown: the experts' GEMMs are GEMMs, the permutation memory-bound */
    ck_assert_int_gt(moe->stage[1].kern_f_ps[PPSIM_KERN_MEMORY],
                     dense->stage[1].kern_f_ps[PPSIM_KERN_MEMORY]);
    /* two local experts: a grouped GEMM of 2 x 1024 slots, and the sort */
    const char *ep8[] = {"parallel.ep=8", NULL};
    g_autoptr(PpsimCosts) two = moe_costs(ep8, 4);
    double d2 = ppsim_gemm_seconds(&g, S / 2, 2 * fe, h, 2) +
                ppsim_gemm_seconds(&g, S / 2, h, fe, 2) - ppsim_gemm_seconds(&g, S, 2 * fe, h, 1) -
                ppsim_gemm_seconds(&g, S, h, fe, 1) + ppsim_mem_seconds(&g, perm + 4 * EL * S * h) -
                ppsim_mem_seconds(&g, perm);
    PpsimTime d2f = (two->stage[1].est.f_ps - two->stage[1].ep_comm_f_ps) -
                    (moe->stage[1].est.f_ps - moe->stage[1].ep_comm_f_ps);
    ck_assert_msg(llabs(d2f - ppsim_time_from_seconds(2 * d2)) <= 2, "%" G_GINT64_FORMAT, d2f);
}
END_TEST

/* The load factor: imbalance 1.5 makes the busiest rank compute 1.5 k routed slots (and send
 * 1.5x the bytes); a capacity factor takes its place (padded slots); MFU's FLOPs stay the
 * useful ones. In the closed form W grows linearly in the slots; under the kernel model by
 * the expert GEMMs' wgrad over 1.5 S slots instead of S. */
START_TEST(test_load_factors)
{
    const char *base_set[] = {closed_form, NULL};
    const char *imb[] = {closed_form, "model.moe.imbalance=1.5", NULL};
    const char *cap[] = {closed_form, "model.moe.imbalance=1.5", "model.moe.capacity_factor=1.25",
                         NULL};
    g_autoptr(PpsimCosts) base = moe_costs(base_set, 4);
    g_autoptr(PpsimCosts) hot = moe_costs(imb, 4);
    g_autoptr(PpsimCosts) capped = moe_costs(cap, 4);
    /* W's growth is linear in the routed slots: 0.25 k more for capacity 1.25, 0.5 k for
     * imbalance 1.5 (within the picosecond roundings) */
    PpsimTime w0 = base->stage[1].est.w_ps, w1 = hot->stage[1].est.w_ps;
    PpsimTime w2 = capped->stage[1].est.w_ps;
    ck_assert(w1 > w0);
    ck_assert_msg(llabs(2 * (w2 - w0) - (w1 - w0)) <= 2,
                  "%" G_GINT64_FORMAT " vs %" G_GINT64_FORMAT, w2 - w0, w1 - w0);
    /* by hand: 2 layers x 0.5 x top_k 2 slots x 6 T h fe FLOPs at 989 TFLOP/s x 0.5 */
    double extra = 2 * 0.5 * 2 * 6 * 1024.0 * 1024 * 512;
    PpsimTime want = ppsim_time_from_seconds(extra / (989e12 * 0.5));
    ck_assert_msg(llabs((w1 - w0) - want) <= 2, "%" G_GINT64_FORMAT " vs %" G_GINT64_FORMAT,
                  w1 - w0, want);
    ck_assert_double_eq(hot->stage[1].fwd_flops, base->stage[1].fwd_flops);
    ck_assert(hot->stage[1].ep_comm_f_ps > base->stage[1].ep_comm_f_ps);
    ck_assert(hot->stage[1].est.act > base->stage[1].est.act);
    /* the kernel model */
    const char *kimb[] = {"model.moe.imbalance=1.5", NULL};
    g_autoptr(PpsimCosts) kb = moe_costs(NULL, 4);
    g_autoptr(PpsimCosts) kh = moe_costs(kimb, 4);
    PpsimGpuSpec g = moe_gpu();
    double S = 2048, h = 1024, fe = 512;
    double dw = ppsim_gemm_seconds(&g, h, 2 * fe, 1.5 * S, 1) +
                ppsim_gemm_seconds(&g, fe, h, 1.5 * S, 1) -
                ppsim_gemm_seconds(&g, h, 2 * fe, S, 1) - ppsim_gemm_seconds(&g, fe, h, S, 1);
    ck_assert(llabs(kh->stage[1].est.w_ps - kb->stage[1].est.w_ps -
                    ppsim_time_from_seconds(2 * dw)) <= 2);
}
END_TEST

static void
expect_error(const char *const *set, const char *needle)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc = parse(moe_yaml, set, &error);
    ck_assert_msg(sc == NULL && error != NULL, "no error for %s", set[0]);
    ck_assert_msg(strstr(error->message, needle) != NULL, "%s", error->message);
}

/* The scenario's rules, each naming its key. */
START_TEST(test_rules)
{
    const char *a[] = {"parallel.ep=3", NULL};
    expect_error(a, "'parallel.ep' (3) must divide");
    const char *b[] = {"model.moe.top_k=17", NULL};
    expect_error(b, "'model.moe.top_k' (17) cannot exceed");
    const char *c[] = {"model.moe.dense_layers=9", NULL};
    expect_error(c, "'model.moe.dense_layers' (9) cannot exceed");
    const char *d[] = {"model.moe.imbalance=0.5", NULL};
    expect_error(d, "imbalance");
    const char *e[] = {"model.moe.experts=0", NULL};
    expect_error(e, "experts");
    const char *sms[] = {"parallel.ep_comm_sms=132", NULL};
    expect_error(sms, "'parallel.ep_comm_sms' (132) must be below 'hardware.gpu.sms' (132)");
    /* expert tensor parallelism: ep x etp GPUs of the stage's tp x cp x dp (etp = tp unless
     * written), etp dividing tp, and no etp of its own on a dense model */
    const char *f[] = {"parallel.tp=2", "parallel.dp=8", "parallel.etp=2", NULL};
    expect_error(f, "'parallel.ep' x 'parallel.etp' (16 x 2) must divide 'parallel.tp' x "
                    "'parallel.cp' x 'parallel.dp' (2 x 1 x 8: the GPUs of one pipeline "
                    "stage); with 'parallel.etp: 1' each expert stays whole");
    /* unwritten, etp is tp unless ep x tp is more than the stage holds: then the largest
     * that fits (here 1: the EP group of 16 spans the 8 TP pairs) */
    const char *const infer[] = {"parallel.tp=2", "parallel.dp=8", NULL};
    g_autoptr(GError) ierr = NULL;
    g_autoptr(PpsimScenario) inferred = parse(moe_yaml, infer, &ierr);
    ppsim_assert_no_error(ierr);
    ck_assert_int_eq(inferred->parallel.etp, 1);
    const char *const no_fit[] = {"parallel.tp=2", "parallel.dp=2", "parallel.pp=8", NULL};
    expect_error(no_fit, "'parallel.ep' x 'parallel.etp' (16 x 2) must divide");
    const char *g[] = {"parallel.tp=2", "parallel.dp=8", "parallel.etp=4", NULL};
    expect_error(g, "'parallel.etp' (4) must divide 'parallel.tp' (2)");
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) dense = parse("hardware: {preset: dgx-h100-80gb}\n"
                                           "model: {layers: 4, hidden: 1024, heads: 8, "
                                           "seq_len: 1024}\n"
                                           "parallel: {tp: 2, dp: 1, etp: 1}\n"
                                           "training: {pp: 2, microbatches: 4}\n"
                                           "schedule: 1f1b\n",
                                           NULL, &error);
    ck_assert(dense == NULL && error != NULL);
    ck_assert_str_eq(error->message, "t.yaml:3:26: 'parallel.etp' (1) needs a "
                                     "mixture-of-experts model ('model.moe')");
}
END_TEST

/* Expert tensor parallelism (parallel.etp) on moe_yaml at tp 2, dp 8, ep 8, tp-dp-pp: with
 * etp = tp = 2 (the default) each expert is split over the TP pair, the EP ranks sit 2 GPUs
 * apart (4 on a node) and the dispatched slots are all-gathered over the pair; with etp 1
 * each GPU holds 16/8 whole experts, its EP group is 8 adjacent GPUs (one node), nothing is
 * gathered, and the experts' optimizer state shards over 16 / 8 = 2 ranks instead of 1.
 * The FLOPs do not change. */
START_TEST(test_expert_tensor_parallel)
{
    const char *base[] = {"parallel.tp=2",   "parallel.dp=8",
                          "parallel.ep=8",   "parallel.placement=tp-dp-pp",
                          "parallel.zero=1", NULL};
    const char *one[] = {"parallel.tp=2",
                         "parallel.dp=8",
                         "parallel.ep=8",
                         "parallel.etp=1",
                         "parallel.zero=1",
                         "parallel.placement=tp-dp-pp",
                         NULL};
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) s2 = parse(moe_yaml, base, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimScenario) s1 = parse(moe_yaml, one, &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(s2->parallel.etp, 2); /* the default: tp */
    ck_assert_int_eq(ppsim_moe_ep_per_node(s2), 4);
    ck_assert_int_eq(ppsim_moe_ep_per_node(s1), 8);
    ck_assert_int_eq(ppsim_mem_expert_shard_ranks(s2), 1);
    ck_assert_int_eq(ppsim_mem_expert_shard_ranks(s1), 2);
    g_autoptr(PpsimCosts) c2 = moe_costs(base, 4);
    g_autoptr(PpsimCosts) c1 = moe_costs(one, 4);
    double h = 1024, fe = 512, per_layer = 2 * 3 * h * fe; /* 16 / 8 experts of 3 h fe */
    ck_assert_double_eq_tol(c2->stage[1].expert_params, 2 * per_layer / 2, 1e-6);
    ck_assert_double_eq_tol(c1->stage[1].expert_params, 2 * per_layer, 1e-6);
    ck_assert_double_eq_tol(c1->stage[1].fwd_flops, c2->stage[1].fwd_flops, 1);
    /* the MoE stage's TP collectives: with etp 1 the attention's and the shared expert's
     * (a dense MLP over tp), not the routed slots' */
    ck_assert_int_lt(c1->stage[1].tp_comm_f_ps, c2->stage[1].tp_comm_f_ps);
    /* the all-to-alls: the same bytes a GPU (its T/tp tokens), all over NVLink with etp 1 */
    ck_assert_uint_eq(c1->stage[1].ep_near_bytes_f, 0);
    ck_assert_uint_gt(c2->stage[1].ep_near_bytes_f, 0);
    /* and the replay sends them there too: device 0's 8 F and 8 B take the cost model's
     * all-to-all time, NVLink's, within a path latency each (through the NIC, where the
     * replay once sent a folded group's flows, they would take about 7 times as long) */
    g_autoptr(PpsimRunResult) r1 = ppsim_test_run_option(s1, "1f1b", NULL, NULL, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimCosts) c1p = ppsim_costs_new(s1, 2, &error);
    ppsim_assert_no_error(error);
    PpsimTime want = 8 * (c1p->stage[0].ep_comm_f_ps + c1p->stage[0].ep_comm_b_ps);
    PpsimTime got = r1->devices[0].ep_comm_ps, slack = 16 * 20 * PPSIM_PS_PER_US;
    ck_assert_int_gt(want, 0);
    ck_assert_msg(got <= want + slack && got + slack >= want,
                  "%" G_GINT64_FORMAT " vs %" G_GINT64_FORMAT, got, want);

    /* the dispatcher's all-gather and reduce-scatter over the etp group show whole with
     * Transformer Engine's TP overlap too ([MEG] moe/token_dispatcher.py: plain collectives
     * between the kernels that need them): what etp 2 adds to a stage's TP time is the same
     * with parallel.tp_comm_overlap as without */
    PpsimTime added[2];
    for (int ov = 0; ov < 2; ov++) {
        const char *sp = "parallel.sequence_parallel=true",
                   *no_shared = "model.moe.shared_experts=0";
        const char *overlap =
            ov ? "parallel.tp_comm_overlap=true" : "parallel.tp_comm_overlap=false";
        const char *o2[] = {base[0], base[1],   base[2], base[3], base[4],
                            sp,      no_shared, overlap, NULL};
        const char *o1[] = {one[0], one[1], one[2],    one[3],  one[4],
                            one[5], sp,     no_shared, overlap, NULL};
        g_autoptr(PpsimCosts) e2 = moe_costs(o2, 4);
        g_autoptr(PpsimCosts) e1 = moe_costs(o1, 4);
        added[ov] = e2->stage[1].tp_comm_f_ps - e1->stage[1].tp_comm_f_ps;
        ck_assert_int_gt(added[ov], 0);
    }
    ck_assert_msg(llabs(added[1] - added[0]) <= 2, "%" G_GINT64_FORMAT " vs %" G_GINT64_FORMAT,
                  added[1], added[0]);
}
END_TEST

/* moe_yaml with @overrides run as 1F1B: the result, and its text report into *@text. */
static PpsimRunResult *
run_with_text(const char *const *overrides, GString **text)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc = parse(moe_yaml, overrides, &error);
    ppsim_assert_no_error(error);
    PpsimRunResult *r = ppsim_test_run_option(sc, "1f1b", NULL, NULL, &error);
    ppsim_assert_no_error(error);
    *text = ppsim_test_report_one(sc, r, FALSE);
    return r;
}

/* JSON: the F&B pairs of dualpipev hide part of the all-to-alls (ep_comm_hidden <= fb_hidden
 * <= ep_comm, all > 0); 1F1B has no pairs; explicit mode: each pair saves F + B + W - F&B. */
START_TEST(test_json_keys)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc = parse(moe_yaml, NULL, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimRunResult) v = ppsim_test_run_option(sc, "dualpipev", NULL, NULL, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimRunResult) one = ppsim_test_run_option(sc, "1f1b", NULL, NULL, &error);
    ppsim_assert_no_error(error);
    for (int d = 0; d < v->p; d++) {
        const PpsimDeviceResult *dev = &v->devices[d];
        ck_assert(dev->ep_comm_ps > 0);
        ck_assert(dev->ep_comm_hidden_ps > 0);
        ck_assert(dev->ep_comm_hidden_ps <= dev->fb_hidden_ps);
        ck_assert(dev->fb_hidden_ps <= dev->ep_comm_ps);
        ck_assert_int_eq(one->devices[d].fb_hidden_ps, 0);
    }
    g_autoptr(GString) json = g_string_new(NULL);
    g_autoptr(GPtrArray) list = g_ptr_array_new();
    g_ptr_array_add(list, v);
    ppsim_report_json(json, sc, list);
    ck_assert(strstr(json->str, "\"ep_comm\":") != NULL);
    ck_assert(strstr(json->str, "\"ep_comm_hidden\":") != NULL);
    /* the text's table of all-to-alls and F&B savings: there with them, absent without */
    g_autoptr(GString) text = g_string_new(NULL);
    ppsim_report_text(text, sc, list);
    ck_assert(strstr(text->str, "ep_hidden") != NULL);
    /* the layout line names the EP group and its dispatch */
    ck_assert_ptr_nonnull(strstr(text->str, "placement tp-pp-dp, ep 16 (alltoall dispatch)\n"));
    const char *const deep[] = {"parallel.ep_dispatch=deepep", NULL};
    g_autoptr(GString) dtext = NULL;
    g_autoptr(PpsimRunResult) vd = run_with_text(deep, &dtext);
    ck_assert_ptr_nonnull(strstr(dtext->str, ", ep 16 (deepep dispatch)\n"));
    const char *const deep8[] = {"parallel.ep_dispatch=deepep", "training.dtype=fp8",
                                 "parallel.ep_fp8_dispatch=true", NULL};
    g_autoptr(GString) text8 = NULL;
    g_autoptr(PpsimRunResult) v8 = run_with_text(deep8, &text8);
    ck_assert_ptr_nonnull(strstr(text8->str, ", ep 16 (deepep dispatch, FP8)\n"));
    /* and an expert-tensor-parallel size other than tp */
    const char *const folded[] = {"parallel.tp=2", "parallel.dp=8", "parallel.etp=1", NULL};
    g_autoptr(GString) ftext = NULL;
    g_autoptr(PpsimRunResult) vf = run_with_text(folded, &ftext);
    ck_assert_ptr_nonnull(strstr(ftext->str, ", ep 16 (alltoall dispatch), etp 1\n"));
    ck_assert_ptr_null(strstr(dtext->str, "etp"));
    /* fewer bytes over the NICs: the all-to-alls end sooner than NCCL's */
    ck_assert_int_lt(vd->devices[0].ep_comm_ps, one->devices[0].ep_comm_ps);
    g_autoptr(PpsimScenario) plain = ppsim_scenario_new_explicit(4, 1, 8, "1f1b");
    g_autoptr(PpsimRunResult) pr = ppsim_test_run_option(plain, "1f1b", NULL, NULL, &error);
    ppsim_assert_no_error(error);
    g_autoptr(GString) plain_text = ppsim_test_report_one(plain, pr, FALSE);
    ck_assert(strstr(plain_text->str, "ep_hidden") == NULL);

    g_autoptr(PpsimScenario) ex = ppsim_scenario_new_explicit(4, 2, 8, "dualpipev");
    ex->costs.forward_backward_ps = 5 * PPSIM_PS_PER_MS / 2;
    g_autoptr(PpsimRunResult) r = ppsim_test_run_option(ex, "dualpipev", NULL, NULL, &error);
    ppsim_assert_no_error(error);
    /* device 0 of p = 4, n = 8: 2n - 3P + h + 1 = 16 - 12 + 1 = 5 pairs, 0.5 ms each */
    ck_assert_int_eq(r->devices[0].fb_hidden_ps, 5 * PPSIM_PS_PER_MS / 2);
    ck_assert_int_eq(r->devices[0].ep_comm_ps, 0);
}
END_TEST

/* The SMs the all-to-alls hold in an F&B pair (parallel.ep_comm_sms; overlap.h): by dispatch
 * when unwritten (DeepEP 24, NCCL's none); by hand, F = 10 ms of which 2 TP, BW = 20 of which
 * 4, all-to-alls 3 (F) and 6 (BW) beside, slow 0.25: c'F = 8 + min(8, 6) 0.25 = 9.5,
 * c'BW = 16 + min(16, 3) 0.25 = 16.75, so F half 9.5 + max(0, 2 - 16.75) = 9.5 and BW half
 * 16.75 + max(0, 4 - 9.5) = 16.75; with slow 0 the plain halves. In a dualpipev run with
 * DeepEP the pairs take longer than with `ep_comm_sms: 0`, and a stage's ep_pair_slow is
 * held / (SMs - held). */
START_TEST(test_pair_sms)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) a2a = parse(moe_yaml, NULL, &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(ppsim_moe_comm_sms(a2a), 0);
    const char *deep[] = {"parallel.ep_dispatch=deepep", NULL};
    g_autoptr(PpsimScenario) dsc = parse(moe_yaml, deep, &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(ppsim_moe_comm_sms(dsc), 24);
    const char *set[] = {"parallel.ep_dispatch=deepep", "parallel.ep_comm_sms=20", NULL};
    g_autoptr(PpsimScenario) s20 = parse(moe_yaml, set, &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(ppsim_moe_comm_sms(s20), 20);

    PpsimTime fo, bwo, ms = PPSIM_PS_PER_MS;
    ppsim_cost_overlap_halves_sm(10 * ms, 20 * ms, 2 * ms, 4 * ms, 3 * ms, 6 * ms, 0.25, &fo, &bwo);
    ck_assert_int_eq(fo, 19 * ms / 2);
    ck_assert_int_eq(bwo, 67 * ms / 4);
    ppsim_cost_overlap_halves_sm(10 * ms, 20 * ms, 2 * ms, 4 * ms, 3 * ms, 6 * ms, 0.0, &fo, &bwo);
    ck_assert_int_eq(fo, 8 * ms);
    ck_assert_int_eq(bwo, 16 * ms);

    g_autoptr(PpsimCosts) c = ppsim_costs_new(dsc, 2, &error);
    ppsim_assert_no_error(error);
    ck_assert_double_eq_tol(c->stage[1].ep_pair_slow, 24.0 / (132 - 24), 1e-12);
    const char *none[] = {"parallel.ep_dispatch=deepep", "parallel.ep_comm_sms=0", NULL};
    g_autoptr(PpsimScenario) s0 = parse(moe_yaml, none, &error);
    ppsim_assert_no_error(error);
    PpsimRunResult *runs[2] = {NULL, NULL};
    const PpsimScenario *scs[2] = {dsc, s0};
    for (int i = 0; i < 2; i++) {
        runs[i] = ppsim_test_run_option(scs[i], "dualpipev", NULL, NULL, &error);
        ppsim_assert_no_error(error);
    }
    g_autoptr(PpsimRunResult) held = runs[0];
    g_autoptr(PpsimRunResult) free_ = runs[1];
    ck_assert_int_gt(held->makespan_ps, free_->makespan_ps);
    ck_assert_int_gt(held->devices[0].busy_ps, free_->devices[0].busy_ps);
}
END_TEST

/* An F&B pair layer by layer (overlap.h), timelines worked by hand (ms).
 * attention {0.5, 0.5, 0}, MLP {4, 4, 0}, all-to-alls {2, 2}: the combine gradient 0-2 beside
 * attention F 0-0.5; MLP B 2-6 (after it) beside the dispatch 2-4; MLP F 6-10 beside the
 * dispatch gradient 6-8 (after MLP B); attention B 10-10.5 and the combine 10-12 (after MLP
 * F): 12, where the whole-stage model hides every all-to-all (4.5 + 4.5 of compute against 4
 * + 4): 9. Two layers: the second's attention F waits for the first's combine, 24.
 * attention {2, 0, 0}, all-to-alls {1, 0}, no MLP: the combine gradient 0-1, attention F 0-2,
 * the dispatch after it 2-3: 3; with slow 1 attention F runs at half speed beside the combine
 * gradient, 0.5 done at 1, the rest 1-2.5, the dispatch 2.5-3.5. Without all-to-alls the
 * compute in a row. */
START_TEST(test_pair_layers)
{
    PpsimTime ms = PPSIM_PS_PER_MS;
    PpsimTime attn[3] = {ms / 2, ms / 2, 0}, mlp[3] = {4 * ms, 4 * ms, 0},
              a2a[2] = {2 * ms, 2 * ms};
    ck_assert_int_eq(ppsim_cost_overlap_layers(1, attn, mlp, a2a, 0.0), 12 * ms);
    ck_assert_int_eq(ppsim_cost_overlap_layers(2, attn, mlp, a2a, 0.0), 24 * ms);
    PpsimTime fo, bwo;
    ppsim_cost_overlap_halves(9 * ms / 2 + 4 * ms, 9 * ms / 2 + 4 * ms, 4 * ms, 4 * ms, &fo, &bwo);
    ck_assert_int_eq(fo + bwo, 9 * ms);

    PpsimTime a2[3] = {2 * ms, 0, 0}, none[3] = {0, 0, 0}, x[2] = {ms, 0};
    ck_assert_int_eq(ppsim_cost_overlap_layers(1, a2, none, x, 0.0), 3 * ms);
    ck_assert_int_eq(ppsim_cost_overlap_layers(1, a2, none, x, 1.0), 7 * ms / 2);

    PpsimTime at[3] = {ms, 2 * ms, 3 * ms}, ml[3] = {4 * ms, 5 * ms, 6 * ms}, zero[2] = {0, 0};
    ck_assert_int_eq(ppsim_cost_overlap_layers(3, at, ml, zero, 0.5), 3 * 21 * ms);
    ck_assert_int_eq(ppsim_cost_overlap_layers(0, at, ml, a2a, 0.0), 0);

    /* moe_yaml in 2 stages: stage 0 holds the 2 dense layers and 2 MoE layers, stage 1 four
     * MoE layers; each pair is its layers' schedule plus the rest of its compute (at least
     * that compute, in this example more); the layers' parts fit in the stage's. recompute:
     * moe (B re-runs the all-to-alls) and no EP keep the whole-stage model. */
    g_autoptr(PpsimCosts) c = moe_costs(NULL, 2);
    for (int s = 0; s < 2; s++) {
        const PpsimStageCost *st = &c->stage[s];
        ck_assert_int_eq(st->pair_layers, s == 0 ? 2 : 4);
        PpsimTime cf = st->est.f_ps - st->ep_comm_f_ps;
        PpsimTime cbw = st->est.b_ps + st->est.w_ps - st->ep_comm_b_ps, per = 0;
        for (int i = 0; i < 3; i++)
            per += st->pl_attn_ps[i] + st->pl_mlp_ps[i];
        ck_assert_int_le(st->pair_layers * per, cf + cbw);
        ck_assert_int_eq(st->ep_comm_f_ps, st->pair_layers * (st->pl_a2a_ps[0] + st->pl_a2a_ps[1]));
        PpsimTime pair = ppsim_cost_overlap_layers(st->pair_layers, st->pl_attn_ps, st->pl_mlp_ps,
                                                   st->pl_a2a_ps, st->ep_pair_slow) +
                         cf + cbw - st->pair_layers * per;
        ck_assert_int_eq(st->est.fo_ps + st->est.bwo_ps, pair);
        ck_assert_int_gt(pair, cf + cbw);
    }
    const char *rc[] = {"model.recompute=moe", NULL};
    g_autoptr(PpsimCosts) r = moe_costs(rc, 2);
    ck_assert_int_eq(r->stage[1].pair_layers, 0);
    const char *one[] = {"parallel.ep=1", NULL};
    g_autoptr(PpsimCosts) e1 = moe_costs(one, 2);
    ck_assert_int_eq(e1->stage[1].pair_layers, 0);
}
END_TEST

/* recompute: moe (Megatron-Core --recompute-modules moe): each MoE layer's MLP block runs
 * again in B, its all-to-alls too (twice the B all-to-alls of mode none), its forward
 * kernels unchanged and its B kernels longer by less than its whole F; it keeps the block's
 * input only, so less activation memory; the dense stage 0 layers are as none. Refused for a
 * dense model. */
START_TEST(test_recompute_moe)
{
    const char *none_set[] = {"parallel.tp=2", "parallel.dp=8", "parallel.sequence_parallel=true",
                              NULL};
    const char *moe_set[] = {"parallel.tp=2", "parallel.dp=8", "parallel.sequence_parallel=true",
                             "model.recompute=moe", NULL};
    g_autoptr(PpsimCosts) a = moe_costs(none_set, 2);
    g_autoptr(PpsimCosts) b = moe_costs(moe_set, 2);
    const PpsimStageCost *sa = &a->stage[1], *sb = &b->stage[1];
    ck_assert_int_gt(sa->ep_comm_b_ps, 0);
    ck_assert_int_eq(sb->ep_comm_b_ps, 2 * sa->ep_comm_b_ps);
    ck_assert_int_eq(sb->ep_comm_f_ps, sa->ep_comm_f_ps);
    PpsimTime fa = 0, ba = 0, bb = 0;
    for (int k = 0; k < 3; k++) {
        ck_assert_int_eq(sb->kern_f_ps[k], sa->kern_f_ps[k]);
        fa += sa->kern_f_ps[k];
        ba += sa->kern_b_ps[k];
        bb += sb->kern_b_ps[k];
    }
    ck_assert_int_gt(bb, ba);
    ck_assert_int_lt(bb - ba, fa);
    ck_assert_int_gt(sb->est.b_ps, sa->est.b_ps);
    ck_assert_int_lt(sb->est.act, sa->est.act);
    /* stage 0 of moe_yaml holds the 2 dense layers before its 2 MoE ones: only those change */
    ck_assert_int_lt(b->stage[0].est.act, a->stage[0].est.act);
    ck_assert_int_eq(b->stage[0].est.f_ps, a->stage[0].est.f_ps);

    g_autoptr(GError) error = NULL;
    static const char dense_yaml[] = "name: d\nhardware: {preset: dgx-h100-80gb}\n"
                                     "model: {layers: 4, hidden: 1024, heads: 8, seq_len: 1024,\n"
                                     "        recompute: moe}\n"
                                     "training: {pp: 2, microbatches: 4}\n";
    g_autoptr(PpsimScenario) d = parse(dense_yaml, NULL, &error);
    ck_assert(d == NULL);
    ck_assert_msg(strstr(error->message, "t.yaml:4:9: ") != NULL &&
                      strstr(error->message, "recompute mode 'moe' re-runs the MoE layers' MLP "
                                             "blocks: it needs a mixture-of-experts model") != NULL,
                  "%s", error->message);
}
END_TEST

/* {mode: k} in model.stage_recompute takes the stage's first k layers, priced as the layers
 * they are: on stage 0 of moe_yaml (2 dense layers, then 2 MoE ones) {moe: 2} changes
 * nothing and {moe: 3} one MoE layer, half of what the whole stage in mode moe changes; on
 * stage 1 (4 MoE layers) {moe: 2} and {full: 2} each repeat the B all-to-alls of 2 layers
 * (their time and the bytes the replay sends as flows): 1.5 times those of mode none, where
 * the whole stage in either mode has twice. A 1F1B replay of the mixed plan lies between
 * those of none and moe. */
START_TEST(test_recompute_mixed_moe)
{
    const char *none[] = {"model.stage_recompute=[none, none]", NULL};
    const char *two[] = {"model.stage_recompute=[{moe: 2}, {moe: 2}]", NULL};
    const char *three[] = {"model.stage_recompute=[{moe: 3}, {full: 2}]", NULL};
    const char *whole[] = {"model.stage_recompute=[moe, moe]", NULL};
    g_autoptr(PpsimCosts) a = moe_costs(none, 2);
    g_autoptr(PpsimCosts) b = moe_costs(two, 2);
    g_autoptr(PpsimCosts) c = moe_costs(three, 2);
    g_autoptr(PpsimCosts) w = moe_costs(whole, 2);
    const PpsimStageCost *a0 = &a->stage[0], *b0 = &b->stage[0], *c0 = &c->stage[0];
    ck_assert_int_eq(b0->est.b_ps, a0->est.b_ps);
    ck_assert_int_eq(b0->est.act, a0->est.act);
    ck_assert_int_eq(b0->ep_comm_b_ps, a0->ep_comm_b_ps);
    ck_assert_int_gt(a0->ep_comm_b_ps, 0);
    ck_assert_int_eq(c0->ep_comm_b_ps, 3 * a0->ep_comm_b_ps / 2);
    ck_assert_int_eq(w->stage[0].ep_comm_b_ps, 2 * a0->ep_comm_b_ps);
    ck_assert(llabs((a0->est.act - c0->est.act) - (c0->est.act - w->stage[0].est.act)) <= 1);
    ck_assert(llabs((c0->est.b_ps - a0->est.b_ps) - (w->stage[0].est.b_ps - c0->est.b_ps)) <= 1);
    ck_assert_int_gt(c0->est.b_ps, a0->est.b_ps);
    for (int i = 0; i < 2; i++) {
        const PpsimStageCost *a1 = &a->stage[1], *m1 = i ? &c->stage[1] : &b->stage[1];
        ck_assert_int_eq(m1->ep_comm_b_ps, 3 * a1->ep_comm_b_ps / 2);
        ck_assert_int_eq(m1->ep_comm_f_ps, a1->ep_comm_f_ps);
        ck_assert(llabs((gint64)m1->ep_bytes_b - 3 * (gint64)a1->ep_bytes_b / 2) <= 1);
    }

    g_autoptr(GError) error = NULL;
    PpsimTime span[3];
    const char *const *sets[3] = {none, two, whole};
    for (int i = 0; i < 3; i++) {
        g_autoptr(PpsimScenario) sc = parse(moe_yaml, sets[i], &error);
        ppsim_assert_no_error(error);
        g_autoptr(PpsimRunResult) r = ppsim_test_run_option(sc, "1f1b", NULL, NULL, &error);
        ppsim_assert_no_error(error);
        span[i] = r->makespan_ps;
    }
    ck_assert_int_lt(span[0], span[1]);
    ck_assert_int_lt(span[1], span[2]);
}
END_TEST

/* The offload ratio for the bytes the scenario stores ([PO] Formula 1's T_o / T_c): for a
 * mixture of experts that of one MoE layer as the cost model prices it, here stage 1 of a
 * [3, 1, 4] split, which holds one MoE layer and nothing else (its round trip over PCIe
 * against its F + B + W), not the dense layer's. */
START_TEST(test_offload_ratio_moe)
{
    const char *set[] = {"training.pp=3",
                         "parallel.pp=3",
                         "parallel.dp=8",
                         "parallel.ep=8",
                         "model.stage_layers=[3, 1, 4]",
                         NULL};
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc = parse(moe_yaml, set, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimCosts) c = ppsim_costs_new(sc, 3, &error);
    ppsim_assert_no_error(error);
    const PpsimStageCost *one = &c->stage[1];
    double tc = (double)(one->est.f_ps + one->est.b_ps + one->est.w_ps) / PPSIM_PS_PER_S;
    double want = 2.0 * one->est.act / sc->hardware.pcie_bytes_per_s / tc;
    ck_assert_double_eq_tol(c->offload_ratio_k_scenario, want, 1e-9 * want);
}
END_TEST

/* FP8 activations (training.dtype: fp8): Transformer Engine keeps each linear layer's input
 * for its wgrad as FP8, 1 byte a value instead of 2. moe_yaml's stage 0 holds 2 dense
 * layers, stage 1 2 MoE layers; T = 1024 tokens, h = q = 1024, f = 4096, fe = 512, tp 1.
 * A dense layer saves T (h + h + q + f) bytes (the two norm outputs, the projection's input,
 * fc2's); an MoE layer T (h + q) and, for each of its 3 expert copies (top-2 and the shared
 * one), its input T h and its fc2 input T fe (its second norm output feeds the router in
 * bf16). Under light recompute the norm outputs and the activation are re-run, so only the
 * projection's input and the experts' inputs are saved; under full nothing; with
 * recompute: moe the MoE layer keeps its first half only. W keeps the same inputs. */
START_TEST(test_fp8_activations)
{
    double T = 1024, h = 1024, q = 1024, f = 4096, fe = 512, slots = 3;
    struct {
        const char *mode;
        double dense, moe;
    } cases[] = {
        {"none", T * (h + h + q + f), T * (h + q) + slots * T * (h + fe)},
        {"light", T * q, T * q + slots * T * h},
        {"full", 0, 0},
        {"moe", T * (h + h + q + f), T * (h + q)},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *mode = g_strdup_printf("model.recompute=%s", cases[i].mode);
        const char *bf[] = {mode, NULL};
        const char *f8[] = {mode, "training.dtype=fp8", NULL};
        g_autoptr(PpsimCosts) b16 = moe_costs(bf, 4);
        g_autoptr(PpsimCosts) fp8 = moe_costs(f8, 4);
        double want[2] = {2 * cases[i].dense, 2 * cases[i].moe};
        for (int s = 0; s < 2; s++) {
            gint64 d = b16->stage[s].est.act - fp8->stage[s].est.act;
            gint64 dw = b16->stage[s].est.act_w - fp8->stage[s].est.act_w;
            ck_assert_msg(llabs(d - llround(want[s])) <= 1,
                          "%s stage %d: %" G_GINT64_FORMAT " for %.0f", cases[i].mode, s, d,
                          want[s]);
            ck_assert_msg(llabs(dw - llround(want[s])) <= 1, "%s stage %d: W %" G_GINT64_FORMAT,
                          cases[i].mode, s, dw);
        }
    }
}
END_TEST

/* The all-to-alls as flows: alone on device 0's NIC (pipeline sends on NVLink, placement
 * tp-pp-dp: EP ranks 2 GPUs apart, 4 a node) each of 1F1B's 16 MoE ops (2 MoE layers on
 * stage 0, 8 F and 8 B) moves 2 layers x 2 all-to-alls x T k h 2 bytes x 12/16 through it
 * at NCCL's 0.92 of 50 GB/s, plus a few microseconds of path latency (the 3/16 for the
 * node's other ranks run beside, over NVLink). With tp-dp-pp the EP ranks are adjacent, 8 a
 * node, so 8/16 go through the NIC, which the pipeline's sends now share (consecutive
 * pipeline devices on other nodes): they take longer than those bytes alone would. */
START_TEST(test_ep_flows)
{
    const double share[2] = {12.0 / 16, 8.0 / 16};
    for (int k = 0; k < 2; k++) {
        const char *set[] = {k ? "parallel.placement=tp-dp-pp" : "parallel.placement=tp-pp-dp",
                             NULL};
        g_autoptr(GError) error = NULL;
        g_autoptr(PpsimScenario) sc = parse(moe_yaml, set, &error);
        ppsim_assert_no_error(error);
        g_autoptr(PpsimRunResult) res = ppsim_test_run_option(sc, "1f1b", NULL, NULL, &error);
        ppsim_assert_no_error(error);
        PpsimTime ep = res->devices[0].ep_comm_ps;
        double bytes = 2 * 2 * 1024.0 * 2 * 1024 * 2 * share[k];
        /* at NCCL's bus bandwidth through the NIC: 0.92 of 50 GB/s */
        PpsimTime lb = 16 * ppsim_time_from_seconds(bytes / (50e9 * 0.92)),
                  slack = 16 * 20 * PPSIM_PS_PER_US;
        if (k == 0)
            ck_assert_msg(ep >= lb && ep <= lb + slack, "%" G_GINT64_FORMAT " vs %" G_GINT64_FORMAT,
                          ep, lb);
        else
            ck_assert_msg(ep > lb + slack, "%" G_GINT64_FORMAT " vs %" G_GINT64_FORMAT, ep, lb);
    }
}
END_TEST

Suite *
ppsim_test_suite(void)
{
    Suite *s = suite_create("moe");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_preset_params);
    tcase_add_test(tc, test_layer_by_hand);
    tcase_add_test(tc, test_context_parallel);
    tcase_add_test(tc, test_expert_shards);
    tcase_add_test(tc, test_expert_tensor_parallel);
    tcase_add_test(tc, test_layer_kernels);
    tcase_add_test(tc, test_load_factors);
    tcase_add_test(tc, test_rules);
    tcase_add_test(tc, test_json_keys);
    tcase_add_test(tc, test_ep_flows);
    tcase_add_test(tc, test_pair_sms);
    tcase_add_test(tc, test_pair_layers);
    tcase_add_test(tc, test_recompute_moe);
    tcase_add_test(tc, test_recompute_mixed_moe);
    tcase_add_test(tc, test_offload_ratio_moe);
    tcase_add_test(tc, test_fp8_activations);
    suite_add_tcase(s, tc);
    return s;
}
