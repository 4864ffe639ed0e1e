/* adaoffload.c: AdaOffload ([OP] App. D, Algorithm 1); see adaoffload.h.
 *
 * Algorithm 1 fills each stage with as many forwards as fit before its first backward can
 * start (step 2: F(s, j) is placed while the previous F and its offload end before
 * EstStart(B(s, 0)) + T), then finishes with PipeOffload's rules (step 3). Here a fill is
 * the count w_d of forwards device d runs before its first B; after it the device repeats
 * B(j), W(j), F(w_d + j) (W right after its B, as [PO] §3 does), then drains B, W. The copy
 * lists come from PipeOffload's planner (offload wherever the F -> B gap hides the round
 * trip, [PO] §4.2, §4.4). The memory limit decides how dense the fill may be: each
 * candidate is measured on the estimates and kept only if it fits. Candidates: Algorithm 1's
 * densest fill with tolerance T = 0 (offload-aware or not), the fills p - d + k for every k,
 * each with and without offload, shrunk device by device until they fit; and PipeOffload's
 * own schedule, so the result is never slower on the estimates than `pipeoffload`.
 *
 * Each fill is timed once (chains that shrink into one another look it up); the chains run
 * most promising first, ties going to the full search's first, so that option `budget` can
 * stop the search early (search-budget.c) without changing what the full search keeps when
 * the budget is not reached.
 */
#include "sched/optpipe/adaoffload.h"
#include "sched/pipeoffload.h"
#include "util/quote.h"
#include "util/ppsim-error.h"

#include <math.h>
#include <string.h>

/* `budget: auto` above p m = 4096: ops timed, and at least this many candidates' worth
 * (3 p m ops each, without offload) */
#define ADA_AUTO_BUDGET 4000000
#define ADA_AUTO_MIN_CANDIDATES 8

/* Where a device's ops go: into @s, or (@s NULL) into the running activation memory of
 * stage @st, in list order (an F allocates its act, a B frees act - act_w, a W act_w). */
typedef struct {
    PpsimSchedule *s;
    const PpsimStageEstimate *st;
    gint64 cur, top;
} AdaEmit;

static inline void
ada_emit(AdaEmit *e, int d, PpsimOpKind kind, int mb)
{
    if (e->s != NULL) {
        ppsim_schedule_push(e->s, d, kind, d, mb);
        return;
    }
    e->cur += kind == PPSIM_OP_F   ? e->st->act
              : kind == PPSIM_OP_B ? -(e->st->act - e->st->act_w)
                                   : -e->st->act_w;
    e->top = MAX(e->top, e->cur);
}

/* One device's compute list: @w forwards, then B(j) W(j - lag) F(w + j), then the rest:
 * W right after its B when @lag is 0 ([PO] §3), else @lag Ws held back (each keeps its
 * act_w), which fills the cool-down as Algorithm 1's step 3 allows ("overlap between B and
 * W tasks") and as ZB-H1 does ([ZB] §2.1). */
static void
ada_device(AdaEmit *e, int d, int w, int lag, int m)
{
    int f = 0, wn = 0;
    for (; f < w; f++)
        ada_emit(e, d, PPSIM_OP_F, f);
    for (int j = 0; j < m; j++) {
        ada_emit(e, d, PPSIM_OP_B, j);
        if (j - wn >= lag)
            ada_emit(e, d, PPSIM_OP_W, wn++);
        if (f < m)
            ada_emit(e, d, PPSIM_OP_F, f++);
    }
    while (wn < m)
        ada_emit(e, d, PPSIM_OP_W, wn++);
}

/* W lags tried: none, ZB-H1's (device d holds d... p-1-d back), and p - 1 everywhere. */
#define ADA_N_LAGS 4

static int
ada_lag(int kind, int p, int d)
{
    switch (kind) {
    case 0:
        return 0;
    case 1:
        return d;
    case 2:
        return p - 1 - d;
    default:
        return p - 1;
    }
}

/* Algorithm 1, steps 1-2: the densest fill of each device. EstStart(B(d, 0)) is the end of
 * microbatch 0's forward through all stages and its backward back to stage d + 1; device d's
 * forwards run as early as the (denser) device d - 1 delivers them; with @offload, each also
 * waits for the copy stream to finish the previous offload (T_offload^max per F). */
static void
ada_dense_fill(const PpsimCostEstimates *c, int p, int m, gboolean offload, int *w)
{
    g_autofree PpsimTime *prev = g_new0(PpsimTime, m), *cur = g_new0(PpsimTime, m);
    PpsimTime fwd0 = 0;
    for (int s = 0; s < p; s++)
        fwd0 += c->stage[s].f_ps + (s > 0 ? c->comm_ps : 0);
    for (int d = 0; d < p; d++) {
        PpsimTime est = fwd0;
        for (int s = p - 1; s > d; s--)
            est += c->stage[s].b_ps + c->comm_ps;
        const PpsimStageEstimate *st = &c->stage[d];
        PpsimTime fend = 0, oend = 0;
        w[d] = 0;
        for (int j = 0; j < m; j++) {
            PpsimTime ready = MAX(fend, offload ? oend : 0);
            if (j > 0 && ready >= est)
                break; /* step 2's BREAK, T = 0 */
            PpsimTime start = MAX(fend, d > 0 ? prev[j] + c->comm_ps : 0);
            fend = start + st->f_ps;
            oend = MAX(fend, oend) + st->off_ps;
            cur[j] = fend;
            w[d] = j + 1;
        }
        for (int j = w[d]; j < m; j++)
            cur[j] = G_MAXINT64 / 4; /* not in the fill: the next device stops there too */
        PpsimTime *t = prev;
        prev = cur;
        cur = t;
    }
}

/* A candidate's place in the full search's order (chain, then step): exact ties on the
 * estimates go to the earliest, whatever order the candidates run in. */
typedef struct {
    int chain, step;
} AdaRank;

/* What the estimates said of one fill: kept per fill, so a fill reached again (shrinking
 * makes chains meet) costs a lookup. */
typedef struct {
    PpsimOpEval ev;
    gint64 peak[]; /* [p] */
} AdaSeen;

typedef struct {
    const PpsimPipelineShape *shape;
    const PpsimCostEstimates *c;
    const gint64 *limit;
    const char *co;
    int plan_passes; /* the copy planner's timings of a whole schedule (budget accounting) */
    PpsimSchedule *best;
    PpsimOpEval best_eval;
    AdaRank best_rank;
    gint64 min_need;  /* smallest memory.limit any candidate fits in (peak + static memory) */
    gint64 spent;     /* ops timed so far */
    gint64 budget;    /* stop timing once spent reaches it and a schedule fits; 0: never */
    GHashTable *seen; /* fill key (GBytes) -> AdaSeen */
} AdaSearch;

static gboolean
ada_rank_less(AdaRank a, AdaRank b)
{
    return a.chain != b.chain ? a.chain < b.chain : a.step < b.step;
}

/* Whether (@ev, @rank) beats the best so far: faster, else lower peak, else earlier. */
static gboolean
ada_better(const AdaSearch *a, const PpsimOpEval *ev, AdaRank rank)
{
    if (a->best == NULL)
        return TRUE;
    if (ev->makespan_ps != a->best_eval.makespan_ps)
        return ev->makespan_ps < a->best_eval.makespan_ps;
    if (ev->peak_max != a->best_eval.peak_max)
        return ev->peak_max < a->best_eval.peak_max;
    return ada_rank_less(rank, a->best_rank);
}

PpsimSchedule *
ppsim_adaoffload_fill(const PpsimPipelineShape *shape, const int *w, int lag)
{
    int p = shape->p, m = shape->m;
    PpsimSchedule *s = ppsim_schedule_new(p, p, m);
    ppsim_schedule_map_plain(s);
    AdaEmit e = {.s = s};
    for (int d = 0; d < p; d++)
        ada_device(&e, d, w[d], ada_lag(lag, p, d), m);
    return s;
}

/* The schedule of fill @w: device lists, then (with @offload) PipeOffload's copy plan. */
static PpsimSchedule *
ada_schedule(AdaSearch *a, const int *w, gboolean offload, int lag, GError **error)
{
    int p = a->shape->p;
    g_autoptr(PpsimSchedule) s = ppsim_adaoffload_fill(a->shape, w, lag);
    if (offload) {
        g_autofree gboolean *mask = g_new(gboolean, (gsize)s->n_stages);
        for (int d = 0; d < s->n_stages; d++)
            mask[d] = TRUE;
        if (!ppsim_pipeoffload_plan(s, a->c, mask, a->co, error))
            return NULL;
        for (int d = 0; d < p; d++)
            a->spent += ((gint64)s->compute[d]->len + s->copy[d]->len) * a->plan_passes;
    }
    return g_steal_pointer(&s);
}

/* Without offload every memory change of a device comes from its compute list, whose ops run
 * one after another: when forwards take time, an F's allocation comes after every change of
 * the ops before it and before every change of the ops after it, so the estimate's peak is
 * the list order's, whatever the timeline. */
gboolean
ppsim_adaoffload_fill_peaks(const PpsimPipelineShape *shape, const PpsimCostEstimates *costs,
                            const int *w, int lag, gint64 *peak)
{
    int p = shape->p;
    for (int d = 0; d < p; d++)
        if (costs->stage[d].f_ps <= 0)
            return FALSE;
    for (int d = 0; d < p; d++) {
        AdaEmit e = {.st = &costs->stage[d]};
        ada_device(&e, d, w[d], ada_lag(lag, p, d), shape->m);
        peak[d] = e.top;
    }
    return TRUE;
}

/* Lowers @a's smallest feasible memory.limit to what a candidate with activation peaks @peak
 * ([p]) needs: its tightest device's peak plus static memory. */
static void
ada_note_need(AdaSearch *a, const gint64 *peak)
{
    gint64 need = 0;
    for (int d = 0; d < a->shape->p; d++)
        need = MAX(need, peak[d] + a->c->stage[d].static_mem);
    a->min_need = MIN(a->min_need, need);
}

/* Offers @s (taken) at @rank: measures it and keeps it if it fits and beats the best; @peak
 * receives its peaks. */
static gboolean
ada_consider(AdaSearch *a, PpsimSchedule *s_in, AdaRank rank, gint64 *peak, PpsimOpEval *ev,
             GError **error)
{
    g_autoptr(PpsimSchedule) s = s_in;
    if (!ppsim_op_eval(s, a->c, a->limit, peak, ev, error))
        return FALSE;
    for (int d = 0; d < s->n_devices; d++)
        a->spent += (gint64)s->compute[d]->len + s->copy[d]->len;
    if (ev->fits && ada_better(a, ev, rank)) {
        ppsim_schedule_free(a->best);
        a->best = g_steal_pointer(&s);
        a->best_eval = *ev;
        a->best_rank = rank;
    }
    return TRUE;
}

/* Runs chain @chain from the fill @w (with or without offload): measures it, then shrinks the
 * fill of every device over its budget by one until all fit or the fill is one forward; each
 * fill is offered to @a (a fill measured before is looked up, not rebuilt). Stops early once
 * the search's budget is spent and a schedule fits. */
static gboolean
ada_fill(AdaSearch *a, int chain, const int *w_in, gboolean offload, int lag, GError **error)
{
    int p = a->shape->p;
    gsize key_len = (2 + (gsize)p) * sizeof(int);
    g_autofree int *key = g_new(int, 2 + p);
    int *w = key + 2;
    key[0] = offload;
    key[1] = lag;
    memcpy(w, w_in, p * sizeof(int));
    for (int step = 0;; step++) {
        /* a device never fills less than the next one: its B(j) waits for the next device's
         * B(j), which waits for the forwards that device fills before it (no cyclic wait) */
        for (int d = 1; d < p; d++)
            w[d] = MAX(1, MIN(w[d], w[d - 1]));
        AdaRank rank = {chain, step};
        g_autoptr(GBytes) k = g_bytes_new(key, key_len);
        AdaSeen *seen = g_hash_table_lookup(a->seen, k);
        if (seen != NULL) {
            /* measured before at a later rank of the full search's order? then it is the
             * same schedule, and this rank is the one the full search would keep */
            if (seen->ev.fits && ada_better(a, &seen->ev, rank)) {
                PpsimSchedule *s = ada_schedule(a, w, offload, lag, error);
                if (s == NULL)
                    return FALSE;
                ppsim_schedule_free(a->best);
                a->best = s;
                a->best_eval = seen->ev;
                a->best_rank = rank;
            }
        } else {
            if (a->budget > 0 && a->spent >= a->budget && a->best != NULL)
                return TRUE; /* the budget is spent: no more timing */
            seen = g_malloc0(sizeof(AdaSeen) + p * sizeof(gint64));
            /* a fill without offload that cannot fit is not timed: only its peaks matter */
            gboolean over = FALSE;
            if (!offload && a->limit != NULL &&
                ppsim_adaoffload_fill_peaks(a->shape, a->c, w, lag, seen->peak))
                for (int d = 0; d < p; d++) {
                    over = over || seen->peak[d] > a->limit[d];
                    seen->ev.peak_max = MAX(seen->ev.peak_max, seen->peak[d]);
                }
            if (!over) {
                PpsimSchedule *s = ada_schedule(a, w, offload, lag, error);
                if (s == NULL || !ada_consider(a, s, rank, seen->peak, &seen->ev, error)) {
                    g_free(seen);
                    return FALSE;
                }
            }
            g_hash_table_insert(a->seen, g_steal_pointer(&k), seen);
            ada_note_need(a, seen->peak);
        }
        gboolean shrunk = FALSE;
        for (int d = 0; a->limit != NULL && d < p; d++)
            if (seen->peak[d] > a->limit[d] && w[d] > 1) {
                w[d]--;
                shrunk = TRUE;
            }
        if (!shrunk)
            return TRUE;
    }
}

/* The chains of the full search, in its order: for offload none then all (@allow_offload),
 * for each W lag, Algorithm 1's densest fill, then the fills p - d + k, k = 0 .. p. They run
 * most promising first: on 327 instances (p = 4-16, m = p-4p, explicit costs of four mixes
 * and the A100 preset, without a limit and under two to four), five chains between them
 * reach the full search's result (makespan, then peak) on every instance but four: the
 * densest fill with offload and W right after B (169 instances), 1F1B's fill (k = 0)
 * without offload with ZB-H1's lag (84 more), the densest fill with offload and that lag
 * (40), the densest without offload with it (20), and k = 0 without offload or lag (10).
 * Then every densest fill, every k = 0, and k = 1, 2, ... */
typedef struct {
    int offload, lag, k; /* k = -1: the densest fill */
    int chain;           /* place in the full search's order */
    int order;           /* place in the run order */
} AdaChain;

static int
ada_chain_cmp(const void *x, const void *y)
{
    const AdaChain *a = x, *b = y;
    return a->order - b->order;
}

static int
ada_chain_order(const AdaChain *ch)
{
    static const AdaChain first[] = {{1, 0, -1}, {0, 1, 0}, {1, 1, -1}, {0, 1, -1}, {0, 0, 0}};
    for (guint i = 0; i < G_N_ELEMENTS(first); i++)
        if (ch->offload == first[i].offload && ch->lag == first[i].lag && ch->k == first[i].k)
            return (int)i;
    /* then by k (densest first), offload before none, lags in order */
    int cls = ch->k + 1;
    return (int)G_N_ELEMENTS(first) + (cls * 2 + !ch->offload) * ADA_N_LAGS + ch->lag;
}

gboolean
ppsim_adaoffload_build(const PpsimPipelineShape *shape, const PpsimCostEstimates *costs,
                       const gint64 *limit, gboolean allow_offload, const char *co_schedule,
                       gint64 budget, PpsimAdaInfo *info, PpsimSchedule **out, PpsimOpEval *eval,
                       GError **error)
{
    int p = shape->p, m = shape->m;
    if (shape->v != 1) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "needs one stage per device (v = 1), got v = %d", shape->v);
        return FALSE;
    }
    g_autoptr(GHashTable) seen =
        g_hash_table_new_full(g_bytes_hash, g_bytes_equal, (GDestroyNotify)g_bytes_unref, g_free);
    AdaSearch a = {.shape = shape,
                   .c = costs,
                   .limit = limit,
                   .co = co_schedule,
                   .plan_passes = MAX(0, ppsim_pipeoffload_plan_passes(costs, p, co_schedule)),
                   .min_need = G_MAXINT64,
                   .budget = budget,
                   .seen = seen};
    int n_chains = (1 + allow_offload) * ADA_N_LAGS * (p + 2);
    g_autofree AdaChain *chains = g_new(AdaChain, n_chains);
    int n = 0;
    for (int offload = 0; offload < 1 + allow_offload; offload++)
        for (int lag = 0; lag < ADA_N_LAGS; lag++)
            for (int k = -1; k <= p; k++, n++) {
                chains[n] = (AdaChain){offload, lag, k, n, 0};
                chains[n].order = ada_chain_order(&chains[n]);
            }
    qsort(chains, n_chains, sizeof(AdaChain), ada_chain_cmp);
    g_autofree int *w = g_new(int, p);
    g_autofree gint64 *peak = g_new0(gint64, p);
    int n_run = 0;
    for (; n_run < n_chains; n_run++) {
        if (budget > 0 && a.spent >= budget && a.best != NULL)
            break;
        const AdaChain *ch = &chains[n_run];
        if (ch->k < 0)
            ada_dense_fill(costs, p, m, ch->offload, w);
        else
            for (int d = 0; d < p; d++)
                w[d] = MIN(m, p - d + ch->k);
        if (!ada_fill(&a, ch->chain, w, ch->offload, ch->lag, error))
            goto fail;
    }
    /* PipeOffload itself (v = 1: offload the one stage), last in the full search's order */
    PpsimSchedule *po = NULL;
    PpsimOpEval po_eval;
    if (!ppsim_pipeoffload_generate(shape, costs, PPSIM_PO_UNIFORM, allow_offload, NULL,
                                    co_schedule, &po, error))
        goto fail;
    if (!ada_consider(&a, po, (AdaRank){n_chains, 0}, peak, &po_eval, error))
        goto fail;
    ada_note_need(&a, peak);
    if (info != NULL)
        *info = (PpsimAdaInfo){.n_run = n_run, .n_total = n_chains, .spent = a.spent};
    if (a.best == NULL) {
        gint64 worst = G_MAXINT64; /* the tightest device's budget, as a memory.limit */
        for (int d = 0; d < p; d++)
            worst = MIN(worst, limit[d] + costs->stage[d].static_mem);
        /* as GPU memory: what the allocator may hold plus what the framework holds */
        g_autofree char *have =
            ppsim_memory_cap_format(costs, ppsim_estimates_gpu_memory(costs, worst));
        g_autofree char *need_text =
            ppsim_memory_cap_format(costs, ppsim_estimates_gpu_memory(costs, a.min_need));
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "memory limit %s is infeasible: no schedule fits it%s; the smallest "
                    "feasible limit found is %s",
                    have, allow_offload ? ", even offloading every activation" : " without offload",
                    need_text);
        return FALSE;
    }
    *out = a.best;
    *eval = a.best_eval;
    return TRUE;
fail:
    ppsim_schedule_free(a.best);
    return FALSE;
}

gboolean
ppsim_optpipe_limits(const PpsimPipelineShape *shape, const PpsimCostEstimates *costs,
                     const char *cap, const char *what, gint64 **limit, GError **error)
{
    int p = shape->p;
    g_autofree gint64 *lim = g_new(gint64, p);
    g_autofree int *map = g_new(int, p);
    for (int d = 0; d < p; d++)
        map[d] = d;
    *limit = NULL;
    if (cap != NULL) {
        char *end = NULL;
        double mb = g_ascii_strtod(cap, &end);
        if (end == cap || *end != '\0' || !(mb >= 1) || !isfinite(mb)) {
            g_autofree char *q = ppsim_quote(cap);
            g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                        "%s: option 'memory_limit' must be a finite number of M_B >= 1, got "
                        "'%s'",
                        what, q);
            return FALSE;
        }
        /* a stage never holds more than every microbatch: a larger cap is that one (and a
         * huge one would overflow the conversion) */
        mb = MIN(mb, (double)shape->m);
        for (int d = 0; d < p; d++)
            lim[d] = (gint64)floor(mb * (double)costs->stage[d].act + 1e-9);
        *limit = g_steal_pointer(&lim);
        return TRUE;
    }
    gboolean applied = FALSE;
    if (!ppsim_memory_cap_default(costs, map, p, p, lim, &applied, what, error))
        return FALSE;
    if (applied)
        *limit = g_steal_pointer(&lim);
    return TRUE;
}

gint64
ppsim_adaoffload_auto_budget(int p, int m)
{
    if ((gint64)p * m <= 4096)
        return 0;
    return MAX((gint64)ADA_AUTO_BUDGET, (gint64)ADA_AUTO_MIN_CANDIDATES * 3 * p * m);
}

void
ppsim_adaoffload_note_budget(GArray *choices, const PpsimPipelineShape *shape,
                             const PpsimCostEstimates *costs, gint64 budget, gboolean is_auto,
                             const PpsimAdaInfo *info, const PpsimOpEval *eval)
{
    if (info->n_run == info->n_total)
        return;
    g_autofree int *map = g_new(int, shape->p);
    for (int d = 0; d < shape->p; d++)
        map[d] = d;
    ppsim_search_budget_note(choices, budget, is_auto, info->n_run, info->n_total,
                             eval->makespan_ps,
                             ppsim_makespan_lower_bound(costs, map, shape->p, shape->p, shape->m));
}
