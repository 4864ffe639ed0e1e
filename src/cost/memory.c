/* memory.c: the framework's memory per GPU; see memory.h. */
#include "cost/memory.h"
#include "cost/mtp.h"
#include "util/ppsim-error.h"

#include <math.h>

#define MIB (1024.0 * 1024.0)
/* [NCCL964]: per-GPU memory of one NCCL communicator after its first all-reduce, 4 A100s on
 * NVLink: 544 MB for a group of two ranks, 688 MB for three or four. */
#define NCCL_PAIR_BYTES (544.0 * MIB)
#define NCCL_GROUP_BYTES (688.0 * MIB)

double
ppsim_mem_grad_bytes_per_param(const PpsimTraining *tr)
{
    return tr->main_grads == PPSIM_MAIN_GRADS_BF16 ? 2.0 : 4.0;
}

void
ppsim_mem_model_state(double params, const PpsimTraining *tr, int zero, int dp,
                      PpsimModelStateBytes *out)
{
    double total = MAX(0.0, tr->bytes_per_param);
    double w = MIN(2.0, total);
    double g = MIN(ppsim_mem_grad_bytes_per_param(tr), total - w);
    double o = total - w - g;
    double nd = MAX(1, dp);
    out->weights = params * w / (zero >= 3 ? nd : 1.0);
    out->gradients = params * g / (zero >= 2 ? nd : 1.0);
    out->optimizer = params * o / (zero >= 1 ? nd : 1.0);
}

static double
logits_per_gpu(const PpsimScenario *sc)
{
    double t = sc->parallel.present ? sc->parallel.tp : 1;
    return (double)sc->model.seq_len * sc->training.microbatch_size * sc->model.vocab / t;
}

double
ppsim_mem_logits_kept_bytes(const PpsimScenario *sc)
{
    return (sc->model.cross_entropy == PPSIM_CE_TE ? 2.0 : 4.0) * logits_per_gpu(sc);
}

double
ppsim_mem_logits_grad_bytes(const PpsimScenario *sc)
{
    return sc->model.cross_entropy == PPSIM_CE_TE ? 0.0 : 2.0 * logits_per_gpu(sc);
}

static double
nccl_group_bytes(int ranks)
{
    return ranks < 2 ? 0.0 : ranks == 2 ? NCCL_PAIR_BYTES : NCCL_GROUP_BYTES;
}

int
ppsim_mem_shard_ranks(const PpsimScenario *sc)
{
    const PpsimParallel *par = &sc->parallel;
    return par->present ? MAX(1, par->dp) * MAX(1, par->cp) : 1;
}

int
ppsim_mem_expert_shard_ranks(const PpsimScenario *sc)
{
    const PpsimParallel *par = &sc->parallel;
    if (!par->present)
        return 1;
    gint64 stage = (gint64)par->tp * MAX(1, par->cp) * MAX(1, par->dp);
    return (int)MAX(1, stage / ((gint64)MAX(1, par->ep) * MAX(1, par->etp)));
}

double
ppsim_mem_local_shard(const PpsimStageCost *st, const PpsimScenario *sc)
{
    const PpsimParallel *par = &sc->parallel;
    if (!par->present || par->zero < 1)
        return st->params;
    return (st->params - st->expert_params) / ppsim_mem_shard_ranks(sc) +
           st->expert_params / ppsim_mem_expert_shard_ranks(sc);
}

double
ppsim_mem_nccl_bytes(const PpsimScenario *sc)
{
    const PpsimParallel *par = &sc->parallel;
    double bytes = nccl_group_bytes(sc->training.pp);
    if (par->present) /* the gradients' group is dp x cp; the context ring has its own */
        bytes += nccl_group_bytes(par->tp) + nccl_group_bytes(par->cp) +
                 nccl_group_bytes(ppsim_mem_shard_ranks(sc));
    return bytes;
}

gint64
ppsim_mem_fixed_bytes(const PpsimScenario *sc)
{
    if (sc->costs.present)
        return 0;
    return ppsim_round_clamped((double)sc->memory_reserved_bytes + ppsim_mem_nccl_bytes(sc));
}

gint64
ppsim_mem_total(gint64 allocated, gint64 fixed, double fragmentation)
{
    return allocated + ppsim_round_clamped(fragmentation * (double)allocated) + fixed;
}

gint64
ppsim_mem_allocatable(gint64 limit, gint64 fixed, double fragmentation)
{
    if (limit <= 0)
        return 0;
    if (fixed >= limit) /* nothing fits; 1, so that the limit stays a limit */
        return 1;
    /* the largest a with a + round(f a) + fixed <= limit: start from the real solution and
     * step over the rounding */
    gint64 a = (gint64)floor((double)(limit - fixed) / (1.0 + fragmentation));
    while (a > 0 && ppsim_mem_total(a, fixed, fragmentation) > limit)
        a--;
    while (ppsim_mem_total(a + 1, fixed, fragmentation) <= limit)
        a++;
    return a;
}

double
ppsim_mem_linear_params(const PpsimStageCost *st, const PpsimScenario *sc)
{
    const PpsimModel *m = &sc->model;
    double t = sc->parallel.present ? MAX(1, sc->parallel.tp) : 1;
    double matrices = (st->has_embedding ? 1.0 : 0.0) +
                      (st->has_head && !ppsim_cost_head_is_embedding(st, m) ? 1.0 : 0.0) +
                      (ppsim_mtp_embedding_copy(st, m) ? 1.0 : 0.0);
    double ends = matrices * (double)m->vocab * m->hidden / t;
    return MAX(0.0, st->params - ends);
}

void
ppsim_mem_fill_stage(PpsimStageCost *st, const PpsimScenario *sc)
{
    const PpsimParallel *par = &sc->parallel;
    int zero = par->present ? par->zero : 0;
    PpsimModelStateBytes ms, ex;
    ppsim_mem_model_state(st->params - st->expert_params, &sc->training, zero,
                          ppsim_mem_shard_ranks(sc), &ms);
    ppsim_mem_model_state(st->expert_params, &sc->training, zero, ppsim_mem_expert_shard_ranks(sc),
                          &ex);
    st->weights_mem = ms.weights + ex.weights;
    /* ZeRO-3 (FSDP) holds whole the unit it computes and the next, prefetched: two units'
     * bf16 weights beyond the shards */
    if (zero >= 3)
        st->weights_mem += 2.0 * 2.0 * st->unit_params;
    /* FP8 with 16-bit weights: Transformer Engine keeps each linear layer's weight cast to FP8
     * and its transpose (delayed and current scaling; block scaling its row- and column-wise
     * copies) between a step's first microbatch and the next step ([TE] `get_fp8_workspace`),
     * 1 + 1 bytes a weight; the embedding and the LM head stay 16-bit. With FP8 weights
     * (training.fp8_weights) the weight itself is FP8 and the transpose takes the bf16 copy's
     * place. Under ZeRO-3 the copies of the two whole units it holds. */
    if (sc->training.dtype == PPSIM_DTYPE_FP8 && !sc->training.fp8_weights)
        st->weights_mem +=
            2.0 * (zero >= 3 ? 2.0 * st->unit_params : ppsim_mem_linear_params(st, sc));
    st->grads_mem = ms.gradients + ex.gradients;
    st->opt_mem = ms.optimizer + ex.optimizer;
    /* the last stage's copy of the word embedding: the tied head, or the MTP depths' copy */
    PpsimModelStateBytes copy = {0};
    if (st->has_head && !st->has_embedding && (sc->model.tied_embeddings || st->mtp > 0)) {
        double t = par->present ? MAX(1, par->tp) : 1;
        ppsim_mem_model_state((double)sc->model.vocab * sc->model.hidden / t, &sc->training, zero,
                              ppsim_mem_shard_ranks(sc), &copy);
    }
    st->copy_weights_mem = copy.weights;
    st->copy_grads_mem = copy.gradients;
    st->copy_opt_mem = copy.optimizer;
    st->static_mem = ppsim_round_clamped(st->weights_mem + st->grads_mem + st->opt_mem);
    /* the head's logits and each MTP depth's, all kept until the backward */
    st->logits_mem =
        st->has_head ? ppsim_round_clamped((1 + st->mtp) * ppsim_mem_logits_kept_bytes(sc)) : 0;
    st->logits_grad_mem = st->has_head ? ppsim_round_clamped(ppsim_mem_logits_grad_bytes(sc)) : 0;
}

void
ppsim_mem_fill_costs(PpsimCosts *c, const PpsimScenario *sc)
{
    c->estimates.memory_limit = c->memory_limit;
    c->estimates.memory_limit_gpu = c->memory_limit;
    if (c->explicit_mode)
        return;
    c->memory_fixed = ppsim_mem_fixed_bytes(sc);
    c->memory_fragmentation = sc->memory_fragmentation;
    c->estimates.memory_fixed = c->memory_fixed;
    c->estimates.memory_fragmentation = c->memory_fragmentation;
    c->estimates.memory_limit =
        ppsim_mem_allocatable(c->memory_limit, c->memory_fixed, c->memory_fragmentation);
    for (int s = 0; s < c->n_stages; s++)
        c->est[s].static_mem += c->stage[s].logits_grad_mem;
}
