/* moe.c: mixture-of-experts layers and expert parallelism; see moe.h. */
#include "cost/moe.h"
#include "cost/kernels.h"
#include "cost/memory.h"
#include "cost/parallel.h"

#include <math.h>

#define MOE_ACT_BYTES 2.0 /* 16-bit activations, as the dense layers' */

int
ppsim_moe_layers_in(const PpsimModel *model, int first, int n)
{
    if (model->moe.experts <= 0)
        return 0;
    int from = MAX(first, model->moe.dense_layers), to = first + n;
    return MAX(0, to - from);
}

int
ppsim_moe_etp(const PpsimScenario *sc)
{
    return sc->parallel.present ? MAX(1, sc->parallel.etp) : 1;
}

int
ppsim_moe_ep_per_node(const PpsimScenario *sc)
{
    const PpsimParallel *par = &sc->parallel;
    const PpsimHardware *hw = &sc->hardware;
    int ep = par->present ? par->ep : 1, etp = ppsim_moe_etp(sc);
    int stride = ppsim_par_dp_stride(sc);
    if (!par->present || etp == par->tp)
        return ppsim_par_group_per_node(hw, ep, stride);
    /* folded: the stage's GPUs on a node (its tp x cp block, times its dp replicas there),
     * etp to an EP rank */
    int block = par->tp * par->cp, replicas = ppsim_par_group_per_node(hw, par->dp, stride);
    return MAX(1, MIN(ep, MIN(hw->gpus_per_node, block * replicas) / etp));
}

int
ppsim_moe_comm_sms(const PpsimScenario *sc)
{
    const PpsimParallel *par = &sc->parallel;
    if (par->ep_comm_sms >= 0)
        return par->ep_comm_sms;
    return par->ep_dispatch == PPSIM_EP_DISPATCH_DEEPEP ? 24 : 0;
}

double
ppsim_moe_load(const PpsimMoe *moe)
{
    return moe->capacity_factor > 0 ? moe->capacity_factor : moe->imbalance;
}

static double
moe_matrices(const PpsimModel *m)
{
    return m->mlp == PPSIM_MLP_SWIGLU ? 3.0 : 2.0;
}

/* C(n - m, k) / C(n, k): the chance that k of n items, drawn uniformly, miss m of them. */
static double
moe_miss(double n, double m, int k)
{
    double none = 1.0;
    for (int i = 0; i < k; i++)
        none *= MAX(0.0, n - m - i) / (n - i);
    return none;
}

/* C(n, j) C(N - n, g - j) / C(N, g): the chance that g of N groups, drawn uniformly, take j
 * of n given ones. */
static double
moe_hypergeom(int N, int n, int g, int j)
{
    if (j > n || g - j > N - n || j > g)
        return 0.0;
    double l = lgamma(n + 1.0) - lgamma(j + 1.0) - lgamma(n - j + 1.0) + lgamma(N - n + 1.0) -
               lgamma(g - j + 1.0) - lgamma(N - n - g + j + 1.0) - lgamma(N + 1.0) +
               lgamma(g + 1.0) + lgamma(N - g + 1.0);
    return exp(l);
}

/* The probability that a GPU's or a node's @held experts include any of a token's top_k:
 * uniform routing, 1 - C(E - held, k) / C(E, k); with group-limited routing (moe.groups,
 * group_top_k: Megatron-Core's --moe-router-num-groups, --moe-router-group-topk) the token
 * uses group_top_k of the groups, uniformly, and its k experts among theirs. The held
 * experts are taken as lying in one group (held <= E / groups) or as whole groups. */
static double
moe_p_holds(const PpsimMoe *moe, double held)
{
    double E = moe->experts;
    int k = moe->top_k, G = moe->groups, g = moe->group_top_k;
    if (G <= 0 || g <= 0 || g >= G)
        return 1.0 - moe_miss(E, held, k);
    double per = E / G, pool = g * per;
    if (held <= per) /* in one group: that group used, then any of the k among them */
        return (double)g / G * (1.0 - moe_miss(pool, held, k));
    int n = (int)lround(held / per);
    double none = 0.0;
    for (int j = 0; j <= MIN(n, g); j++) /* j of its n groups used, none hit */
        none += moe_hypergeom(G, n, g, j) * moe_miss(pool, j * per, k);
    return 1.0 - none;
}

/* One all-to-all's time: @near bytes over NVLink, and beside them, with @across, @far through
 * the NIC, at each transport's line rate times its bus efficiency, plus its latency. */
static PpsimTime
moe_a2a_ps(const PpsimHardware *hw, double near, double far, gboolean across, double nv_eff,
           double net_eff)
{
    PpsimTime t = 0;
    if (near > 0)
        t = ppsim_time_from_seconds(near / (hw->nvlink_bytes_per_s * nv_eff)) +
            hw->nvlink_latency_ps;
    if (across)
        t = MAX(t, ppsim_time_from_seconds(far / (hw->network_bytes_per_s * net_eff)) +
                       hw->network_latency_ps);
    return t;
}

/* One layer's parameters on the path the cost model takes for @m. */
static double
moe_layer_params(const PpsimModel *m)
{
    return m->mlp == PPSIM_MLP_SWIGLU ? ppsim_par_layer_params(m) : ppsim_cost_layer_params(m);
}

void
ppsim_moe_model_params(const PpsimModel *model, double *total, double *active)
{
    double h = model->hidden, V = model->vocab, L = model->layers;
    double dense = L * moe_layer_params(model);
    double outer = (model->tied_embeddings ? 1.0 : 2.0) * V * h + h; /* embedding, head, norm */
    if (model->mlp != PPSIM_MLP_SWIGLU)
        outer += model->seq_len * h + h; /* learned positions; LayerNorm bias */
    int n = ppsim_moe_layers_in(model, 0, model->layers);
    const PpsimMoe *moe = &model->moe;
    double mats = moe_matrices(model), fe = moe->expert_ffn_hidden;
    double dense_ffn = mats * h * model->ffn_hidden, expert = mats * h * fe,
           router = h * moe->experts;
    *total =
        outer + dense + n * ((moe->experts + moe->shared_experts) * expert + router - dense_ffn);
    *active =
        outer + dense + n * ((moe->top_k + moe->shared_experts) * expert + router - dense_ffn);
}

/* The dense FFN's share of one layer's activation bytes on the cost model's path: the
 * layer's activation less that of the same layer without an FFN. */
static double
moe_dense_ffn_act(const PpsimScenario *sc, int t, gboolean sp)
{
    PpsimModel m = sc->model, none = sc->model;
    none.ffn_hidden = 0;
    int b = sc->training.microbatch_size;
    if (ppsim_par_active(sc)) /* of the GPU's s/cp tokens, as parallel.c keeps them */
        return (ppsim_par_layer_act_bytes(&m, b, t, sp) -
                ppsim_par_layer_act_bytes(&none, b, t, sp)) /
               MAX(1, sc->parallel.cp);
    return ppsim_cost_layer_act_bytes(&m, b) - ppsim_cost_layer_act_bytes(&none, b);
}

/* FP8 (parallel.h ppsim_par_layer_fp8_saved_bytes): the dense layer's saving took off its
 * second norm's output and fc2's input as FP8; in an MoE layer that norm output feeds the
 * router and the permutation in bf16, and each of the @slots expert copies keeps its input
 * (the dispatched copy of @copy elements) and its fc2 input as FP8 instead. What that adds
 * to the layer's bytes. */
static double
moe_fp8_act_delta(const PpsimScenario *sc, int t, gboolean sp, double copy, double slots)
{
    PpsimModel m = sc->model, none = sc->model;
    none.ffn_hidden = 0;
    int b = sc->training.microbatch_size;
    gboolean par = ppsim_par_active(sc);
    int tt = par ? t : 1;
    gboolean ssp = par && sp;
    double cp = par ? MAX(1, sc->parallel.cp) : 1;
    double base = ppsim_par_layer_fp8_saved_bytes(&m, b, tt, ssp) / cp;
    double fc2 = base - ppsim_par_layer_fp8_saved_bytes(&none, b, tt, ssp) / cp;
    double norm = m.recompute == PPSIM_RECOMPUTE_LIGHT
                      ? 0.0
                      : (double)b * m.seq_len / cp * m.hidden / (ssp ? tt : 1);
    double expert = fc2 * m.moe.expert_ffn_hidden / m.ffn_hidden + copy;
    return norm + fc2 - slots * expert;
}

static PpsimTime
moe_time(double flops, double rate)
{
    return ppsim_time_from_seconds(flops / rate);
}

void
ppsim_moe_fill_stage(PpsimStageCost *st, const PpsimScenario *sc, double rate)
{
    const PpsimModel *m = &sc->model;
    const PpsimMoe *moe = &m->moe;
    st->ep_comm_f_ps = st->ep_comm_b_ps = 0;
    st->ep_pair_slow = 0;
    st->pl_a2a_ps[0] = st->pl_a2a_ps[1] = 0;
    st->expert_params = 0;
    st->ep_bytes_f = st->ep_bytes_b = 0;
    st->ep_near_bytes_f = st->ep_near_bytes_b = 0;
    int n = ppsim_moe_layers_in(m, st->first_layer, ppsim_cost_stage_blocks(st));
    if (n == 0)
        return;
    const PpsimParallel *par = &sc->parallel;
    int t = par->present ? par->tp : 1, ep = par->present ? par->ep : 1;
    gboolean sp = par->present && par->sequence_parallel && t > 1;
    gboolean full = m->recompute == PPSIM_RECOMPUTE_FULL;
    /* recompute: moe re-runs the MoE blocks' forward in B, all-to-alls too, as full does */
    gboolean rerun = full || m->recompute == PPSIM_RECOMPUTE_MOE;
    /* the GPU's tokens: s/cp of each sequence under context parallelism */
    double T = (double)sc->training.microbatch_size * m->seq_len / (par->present ? par->cp : 1),
           h = m->hidden;
    double f = m->ffn_hidden, fe = moe->expert_ffn_hidden, E = moe->experts;
    double mats = moe_matrices(m);
    double load = ppsim_moe_load(moe);

    /* FLOPs of one layer's forward over the GPU's T tokens, the tp group's (the cost model
     * divides by tp) */
    double dense_ffn = 2.0 * mats * T * h * f, expert = 2.0 * mats * T * h * fe;
    double router = 2.0 * T * h * E;
    double run = n * ((moe->top_k * load + moe->shared_experts) * expert + router - dense_ffn);
    double useful = n * ((moe->top_k + moe->shared_experts) * expert + router - dense_ffn);
    double r = rate * (par->present && t > 1 ? par->tp_efficiency : 1.0);
    /* a signed difference (fewer expert FLOPs than the dense FFN's is possible); under the
     * kernel model the MoE layers' kernels are already kernels.c's (moe_mlp) */
    PpsimTime d_f = ppsim_kernels_active(sc) ? 0
                    : run >= 0               ? moe_time(run / t, r)
                                             : -moe_time(-run / t, r);
    PpsimTime d_b = full ? 2 * d_f : d_f;            /* full recompute re-runs the forward in B */
    if (!full && rerun && !ppsim_kernels_active(sc)) /* recompute: moe, the blocks whole */
        d_b += moe_time(n * ((moe->top_k * load + moe->shared_experts) * expert + router) / t, r);

    /* all-to-all: dispatch and combine in F, their gradients in B */
    if (ep > 1) {
        const PpsimHardware *hw = &sc->hardware;
        int local = ppsim_moe_ep_per_node(sc); /* EP ranks on a node */
        double token = load * (T / t) * h * MOE_ACT_BYTES, sent = moe->top_k * token;
        gboolean across = local < ep;
        double far = across ? sent * (ep - local) / ep : 0.0; /* through the NIC */
        double near = sent * (local - 1) / ep;                /* over NVLink */
        if (par->ep_dispatch == PPSIM_EP_DISPATCH_DEEPEP) {
            /* DeepEP sends a token once to each GPU holding any of its top_k experts, and
             * across nodes once to each other node holding any, to the GPU of the same index
             * there, which forwards it over NVLink to the others ([DEEPEP] `deep_ep/buffer.py`
             * `get_dispatch_layout`: is_token_in_rank, num_tokens_per_rdma_rank). Uniform
             * routing: a GPU (node) holds one of a token's experts with probability
             * 1 - C(E - E/ep, k) / C(E, k) (E/nodes); NVLink carries a copy to each holding
             * GPU but one a node (the receiving, or the sending, GPU) */
            double nodes = across ? (double)ep / local : 1.0;
            far = across ? token * (nodes - 1.0) * moe_p_holds(moe, E / nodes) : 0.0;
            near = token * (ep - nodes) * moe_p_holds(moe, E / ep);
        }
        /* the kernel model times NCCL at its bus bandwidth per transport, as every collective
         * (kernels.c); the closed form at the line rate */
        gboolean nccl = ppsim_kernels_active(sc);
        double nv_eff = nccl ? hw->nvlink_bus_efficiency : 1.0;
        double net_eff = nccl ? hw->network_bus_efficiency : 1.0;
        PpsimTime a2a = moe_a2a_ps(hw, near, far, across, nv_eff, net_eff);
        /* parallel.ep_fp8_dispatch: each pass's dispatch-direction all-to-all (F's dispatch,
         * B's combine gradient) carries FP8 values and an fp32 scale per 128 ([DSV3] §3.3.3;
         * [DEEPEP] `dispatch`: an FP8 tensor with [tokens, hidden / 128] fp32 scales), the
         * combine direction stays 16-bit */
        double w8 = par->ep_fp8_dispatch ? (1.0 + 4.0 / 128.0) / MOE_ACT_BYTES : 1.0;
        PpsimTime a2a8 = par->ep_fp8_dispatch
                             ? moe_a2a_ps(hw, near * w8, far * w8, across, nv_eff, net_eff)
                             : a2a;
        /* an F&B pair's compute beside them runs on the SMs they leave (kernel model) */
        int sms = hw->gpu_sms, held = ppsim_moe_comm_sms(sc);
        if (nccl && sms > 0 && held > 0 && held < sms)
            st->ep_pair_slow = (double)held / (double)(sms - held);
        st->pl_a2a_ps[0] = a2a8; /* F's dispatch, B's combine gradient */
        st->pl_a2a_ps[1] = a2a;
        if (rerun) /* B re-runs the all-to-alls: the whole-stage pair model (overlap.h) */
            st->pair_layers = 0;
        int pairs_b = rerun ? 2 * n : n; /* dispatch-combine pairs in one B */
        st->ep_comm_f_ps = ppsim_mul_clamped(n, a2a + a2a8);
        st->ep_comm_b_ps = ppsim_mul_clamped(pairs_b, a2a + a2a8);
        /* the replay's links run at line rate: the bytes they carry in the NCCL time */
        double path = across ? far / net_eff : near / nv_eff, beside = across ? near / nv_eff : 0.0;
        double per_f = n * (1.0 + w8), per_b = pairs_b * (1.0 + w8);
        st->ep_bytes_f = (guint64)ppsim_round_clamped(per_f * path);
        st->ep_bytes_b = (guint64)ppsim_round_clamped(per_b * path);
        st->ep_near_bytes_f = (guint64)ppsim_round_clamped(per_f * beside);
        st->ep_near_bytes_b = (guint64)ppsim_round_clamped(per_b * beside);
    } else {
        st->pair_layers = 0; /* no all-to-all: the whole-stage pair model (overlap.h) */
    }
    st->est.f_ps = MAX(0, st->est.f_ps + d_f) + st->ep_comm_f_ps;
    st->est.b_ps = MAX(0, st->est.b_ps + d_b) + st->ep_comm_b_ps;
    st->est.w_ps = MAX(0, st->est.w_ps + d_f);
    st->est.r_ps = MAX(0, st->est.r_ps + d_f) + st->ep_comm_f_ps;
    st->fwd_flops += useful * (par->present ? par->cp : 1); /* the tp x cp group's */

    if (!full) {
        double ffn_act = moe_dense_ffn_act(sc, t, sp), rep = sp ? t : 1;
        /* the dispatched copy of a token: with etp < tp the GPU's experts see the tokens of
         * their etp group, etp T / tp of them */
        int etp = ppsim_moe_etp(sc);
        double copy = etp < t ? T * h * etp / t : T * h / rep;
        double slot = ffn_act * fe / f + MOE_ACT_BYTES * copy;
        double layer = (moe->top_k * load + moe->shared_experts) * slot + 4.0 * T * E / rep;
        if (rerun) /* recompute: moe keeps the block's input only, which the layer holds */
            layer = 0.0;
        double d_act = n * (layer - ffn_act);
        if (sc->training.dtype == PPSIM_DTYPE_FP8)
            d_act += n * moe_fp8_act_delta(sc, t, sp, copy,
                                           rerun ? 0.0 : moe->top_k * load + moe->shared_experts);
        st->est.act = MAX(0, st->est.act + ppsim_round_clamped(d_act));
        st->est.act_w = MAX(0, MIN(st->est.act, st->est.act_w + ppsim_round_clamped(d_act)));
        st->offload_bytes = (guint64)st->est.act;
    }

    /* the GPU's share of its local experts: each split over the etp GPUs */
    double routed = n * (E / ep) * mats * h * fe / ppsim_moe_etp(sc);
    double d_params = n * (moe->shared_experts * mats * h * fe + h * E - mats * h * f) / t + routed;
    double before = st->params, after = MAX(0.0, before + d_params);
    if (before > 0) {
        double k = after / before;
        st->static_mem = ppsim_round_clamped((double)st->static_mem * k);
        /* the DP collectives: the dense parameters over the dp x cp ranks, the routed experts'
         * over the ranks that hold the same experts (memory.h), a ring's (n - 1) / n of them
         * (none with one rank), counted as a share of the dp x cp ring's bytes */
        double g = ppsim_mem_shard_ranks(sc), ge = ppsim_mem_expert_shard_ranks(sc);
        double share = g > 1 ? ((ge - 1) / ge) / ((g - 1) / g) : 0.0;
        double kd = MAX(0.0, after - routed + share * routed) / before;
        st->dp_bytes = (guint64)ppsim_round_clamped((double)st->dp_bytes * kd);
        st->pg_bytes = (guint64)ppsim_round_clamped((double)st->pg_bytes * kd);
        st->pg_ps = ppsim_round_clamped((double)st->pg_ps * kd);
        st->zero_bytes = (guint64)ppsim_round_clamped((double)st->zero_bytes * kd);
        /* the gathers move the experts' weights too; F and B include them */
        PpsimTime zg = ppsim_round_clamped((double)st->zero_gather_ps * kd);
        st->est.f_ps = MAX(0, st->est.f_ps + zg - st->zero_gather_ps);
        st->est.b_ps = MAX(0, st->est.b_ps + zg - st->zero_gather_ps);
        st->zero_gather_ps = zg;
        st->dp_comm_ps = ppsim_round_clamped((double)st->dp_comm_ps * kd);
    }
    st->params = after;
    st->expert_params = MIN(routed, after);
    /* one MoE layer whole, as ZeRO-3 gathers it: the dense layer's attention and norms, the
     * router and shared experts over tp, the local experts over etp */
    double dense = moe_layer_params(m);
    double layer =
        (dense - mats * h * f + moe->shared_experts * mats * h * fe + h * E) / t + routed / n;
    double ends = 0.0; /* the embedding and the head, units of their own */
    if (st->has_embedding)
        ends = MAX(ends, m->vocab * h + (ppsim_model_rotary(m) ? 0.0 : m->seq_len * h));
    if (st->has_head)
        ends = MAX(ends, m->vocab * h);
    st->unit_params = MAX(MAX(layer, ends / t), n < ppsim_cost_stage_blocks(st) ? dense / t : 0.0);
    if (ppsim_kernels_active(sc))
        st->opt_ps = ppsim_kernels_optimizer_ps(st, sc);
}
