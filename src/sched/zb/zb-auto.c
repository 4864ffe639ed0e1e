/* zb-auto.c: the automatic Zero Bubble scheduler of [ZB] §3 for one stage per device:
 * candidate orders timed on the cost estimates, the best kept, then improved by local search.
 * Not an ILP: [ZB] §3 refines its heuristic with one; this file moves single ops instead.
 *
 * The main builder works microbatch by microbatch, as [ZB] §3 describes (the authors'
 * reference heuristic has the same shape): warm-up forwards on each stage, as many as the
 * memory cap allows while they still end before the first B can arrive; then, per microbatch,
 * one F on every stage (front to back) and one B on every stage (back to front); a W goes in
 * wherever the stage would otherwise idle waiting for an input, or when the cap leaves no
 * room for the next F; the W left over run at the end. Three yes/no choices of [ZB] §3 (one
 * more warm-up F that may leave a small bubble; skip an F when a stage runs two ahead of the
 * next one; fill a gap shorter than T_W by a W even when the bubble would not raise the
 * largest one) and a lower working cap (1 M_B .. the cap, which also bounds the warm-up)
 * make the grid. Other candidates: the event-driven list scheduler of zb-list.c at every
 * working cap (it does better than the wave builder when the cap is below p), and the
 * handcrafted 1F1B-with-split, ZB-H1 and ZB-H2 orders when they fit the cap.
 *
 * Objective: the smallest longest-stage span ([ZB] §5.3's cost: a stage's last end minus its
 * first start), then the smallest makespan, among candidates that end no later than the best
 * handcrafted order that fits; so zb never loses to ZB-H1, ZB-H2 or 1F1B under the same cap.
 * Ties go to the candidate earlier in the full search's order (handcrafted, then caps
 * ascending), although the built candidates run largest cap first; a budget of built and
 * timed ops (option `budget`) may stop the search early, and short of that the order
 * changes nothing.
 */
#include "sched/zb-auto.h"
#include "sched/zb/zb-handcrafted.h"
#include "sched/zb/zb-list.h"
#include "util/ppsim-error.h"

#include <math.h>
#include <string.h>

enum {
    ZB_ALLOW_BUBBLE_BEFORE_B = 1 << 0, /* a warm-up F may end after the first B could start */
    ZB_SKIP_F = 1 << 1,                /* a stage two Fs ahead may skip its F this round */
    ZB_FILL_SMALL_GAPS = 1 << 2,       /* fill a gap shorter than W even if it costs no max */
};

typedef struct {
    int S, m;
    const PpsimCostEstimates *c;
    const gint64 *limit; /* [S] working cap; <= 0: none */
    unsigned flags;
    PpsimSchedule *sched;
    int *nf, *nb, *nw;  /* [S] ops placed so far */
    PpsimTime *end;     /* [S] when the stage's last placed op ends */
    PpsimTime *bubble;  /* [S] idle time after the stage's first F */
    gint64 *mem;        /* [S] activation after the placed ops */
    PpsimTime *tf, *tb; /* [S * m] end of F / B */
} ZbBuild;

static gboolean
zbb_fits(const ZbBuild *z, int s, gint64 mem)
{
    return z->limit[s] <= 0 || mem <= z->limit[s];
}

static PpsimTime
zbb_max_bubble(const ZbBuild *z)
{
    PpsimTime mx = 0;
    for (int s = 0; s < z->S; s++)
        mx = MAX(mx, z->bubble[s]);
    return mx;
}

/* When the input of the stage's next F (or of B of microbatch @j) arrives. */
static PpsimTime
zbb_arrival(const ZbBuild *z, int s, int kind, int j)
{
    if (kind == PPSIM_OP_F)
        return s > 0 ? z->tf[(s - 1) * z->m + j] + z->c->comm_ps : 0;
    return s + 1 < z->S ? z->tb[(s + 1) * z->m + j] + z->c->comm_ps : z->tf[s * z->m + j];
}

static void
zbb_put(ZbBuild *z, int s, int kind)
{
    const PpsimStageEstimate *st = &z->c->stage[s];
    int j = kind == PPSIM_OP_F ? z->nf[s]++ : kind == PPSIM_OP_B ? z->nb[s]++ : z->nw[s]++;
    PpsimTime start = z->end[s];
    if (kind != PPSIM_OP_W)
        start = MAX(start, zbb_arrival(z, s, kind, j));
    if (z->nf[s] > 1 || kind != PPSIM_OP_F)
        z->bubble[s] += start - z->end[s];
    if (kind == PPSIM_OP_F) {
        z->end[s] = start + st->f_ps;
        z->tf[s * z->m + j] = z->end[s];
        z->mem[s] += st->act;
    } else if (kind == PPSIM_OP_B) {
        z->end[s] = start + st->b_ps;
        z->tb[s * z->m + j] = z->end[s];
        z->mem[s] -= st->act - st->act_w;
    } else {
        z->end[s] = start + st->w_ps;
        z->mem[s] -= st->act_w;
    }
    /* the device's list has room for its 3 m ops (zbb_build); ppsim_schedule_push's op */
    GArray *ops = z->sched->compute[s];
    int n = z->nf[s] + z->nb[s] + z->nw[s] - 1;
    g_assert(n < (int)ops->len);
    g_array_index(ops, PpsimOp, n) = (PpsimOp){.kind = kind, .stage = s, .microbatch = j};
}

/* Runs pending Ws until the stage has room for @need more units; FALSE if it cannot. */
static gboolean
zbb_make_room(ZbBuild *z, int s, gint64 need)
{
    while (!zbb_fits(z, s, z->mem[s] + need)) {
        if (z->nw[s] >= z->nb[s])
            return FALSE;
        zbb_put(z, s, PPSIM_OP_W);
    }
    return TRUE;
}

/* Fills the wait for an input arriving at @arr with pending Ws: every W that ends by then,
 * and one more that overruns it unless the gap left is a bubble the stage can afford (it
 * does not raise the largest cumulative bubble) and small gaps are not being filled. */
static void
zbb_fill(ZbBuild *z, int s, PpsimTime arr)
{
    while (z->nw[s] < z->nb[s] && z->end[s] + z->c->stage[s].w_ps <= arr)
        zbb_put(z, s, PPSIM_OP_W);
    if (z->nw[s] >= z->nb[s] || z->end[s] >= arr)
        return;
    gboolean affordable = arr - z->end[s] <= zbb_max_bubble(z) - z->bubble[s];
    if (!affordable || (z->flags & ZB_FILL_SMALL_GAPS))
        zbb_put(z, s, PPSIM_OP_W);
}

/* Microbatch 0: one F on every stage, then per stage the warm-up Fs that fit under the cap
 * and (estimated with back-to-back Fs) end before B(0) can reach it, strictly fewer on each
 * later stage unless it already has all m; then B(0) from the last stage back. */
static void
zbb_warmup(ZbBuild *z, int *req)
{
    int S = z->S, m = z->m;
    for (int s = 0; s < S; s++)
        zbb_put(z, s, PPSIM_OP_F);
    PpsimTime comm = z->c->comm_ps;
    PpsimTime last = z->tf[(S - 1) * m] + z->c->stage[S - 1].b_ps; /* B(0) ends on s + 1 */
    memset(req, 0, S * sizeof(int));
    for (int s = S - 2; s >= 0; s--) {
        const PpsimStageEstimate *st = &z->c->stage[s];
        gint64 mem = z->mem[s];
        PpsimTime t = z->end[s];
        while (z->nf[s] + req[s] < m && zbb_fits(z, s, mem + st->act)) {
            if ((z->flags & ZB_ALLOW_BUBBLE_BEFORE_B) ? t + st->f_ps > last + comm
                                                      : t >= last + comm)
                break;
            mem += st->act;
            t += st->f_ps;
            req[s]++;
        }
        last = MAX(t, last + comm) + st->b_ps;
    }
    for (int s = 1; s < S; s++)
        while (req[s] > 0 && req[s] >= req[s - 1] && z->nf[s] + req[s] < m)
            req[s]--;
    for (int s = 0; s < S; s++)
        for (int k = 0; k < req[s]; k++)
            zbb_put(z, s, PPSIM_OP_F);
    for (int s = S - 1; s >= 0; s--)
        zbb_put(z, s, PPSIM_OP_B);
}

/* Whether stage @s, two or more Fs ahead of stage s + 1, should skip its F this round
 * ([ZB] §3's second yes/no choice): yes when the gradient from s + 1 comes before the F (and
 * the Ws the cap forces) would end, unless waiting for it costs more than the stage can
 * afford without raising the largest cumulative bubble. */
static gboolean
zbb_skip_f(const ZbBuild *z, int s)
{
    const PpsimStageEstimate *st = &z->c->stage[s], *nx = &z->c->stage[s + 1];
    PpsimTime next_b = z->end[s + 1] + nx->f_ps + nx->b_ps + z->c->comm_ps;
    if (z->end[s] >= next_b)
        return TRUE;
    PpsimTime w_cost = 0;
    gint64 mem = z->mem[s] + st->act;
    for (int k = z->nw[s]; !zbb_fits(z, s, mem) && k < z->nb[s]; k++) {
        w_cost += st->w_ps;
        mem -= st->act_w;
    }
    if (z->end[s] + st->f_ps + w_cost <= next_b)
        return FALSE;
    return next_b - z->end[s] <= zbb_max_bubble(z) - z->bubble[s];
}

static gboolean
zbb_round(ZbBuild *z, int i, int *req)
{
    int S = z->S;
    for (int s = 0; s < S; s++) {
        req[s] = z->nf[s] < z->m;
        if (req[s] && (z->flags & ZB_SKIP_F) && s + 1 < S && z->nf[s] >= z->nf[s + 1] + 2)
            req[s] = !zbb_skip_f(z, s);
    }
    for (int s = S - 2; s >= 0; s--) /* a stage runs an F only if the next one does */
        req[s] = MIN(req[s], req[s + 1]);
    for (int s = 0; s < S; s++) {
        if (!req[s])
            continue;
        if (!zbb_make_room(z, s, z->c->stage[s].act))
            return FALSE;
        if (s > 0)
            zbb_fill(z, s, zbb_arrival(z, s, PPSIM_OP_F, z->nf[s]));
        zbb_put(z, s, PPSIM_OP_F);
    }
    for (int s = S - 1; s >= 0; s--) {
        g_assert(z->nb[s] == i);
        if (s + 1 < S)
            zbb_fill(z, s, zbb_arrival(z, s, PPSIM_OP_B, i));
        if (s == 0 && z->nf[0] == z->m) /* stage 0's B feeds no one: its Ws may go first */
            while (z->nw[0] < z->nb[0])
                zbb_put(z, 0, PPSIM_OP_W);
        zbb_put(z, s, PPSIM_OP_B);
    }
    return TRUE;
}

/* One greedy build; NULL when the working cap leaves no room for an F. */
static PpsimSchedule *
zbb_build(int p, int m, const PpsimCostEstimates *c, const gint64 *limit, unsigned flags)
{
    ZbBuild z = {.S = p, .m = m, .c = c, .limit = limit, .flags = flags};
    g_autoptr(PpsimSchedule) sched = ppsim_schedule_new(p, p, m);
    ppsim_schedule_map_plain(sched);
    for (int d = 0; d < p; d++) /* written in place, trimmed below */
        g_array_set_size(sched->compute[d], 3 * m);
    z.sched = sched;
    g_autofree int *counts = g_new0(int, 4 * p);
    z.nf = counts, z.nb = counts + p, z.nw = counts + 2 * p;
    int *req = counts + 3 * p;
    g_autofree PpsimTime *times = g_new0(PpsimTime, 2 * p + 2 * p * m);
    z.end = times, z.bubble = times + p, z.tf = times + 2 * p, z.tb = z.tf + p * m;
    g_autofree gint64 *mem = g_new0(gint64, p);
    z.mem = mem;
    for (int s = 0; s < p; s++)
        if (!zbb_fits(&z, s, c->stage[s].act))
            return NULL;
    zbb_warmup(&z, req);
    for (int i = 1; i < m; i++)
        if (!zbb_round(&z, i, req))
            return NULL;
    for (int s = 0; s < p; s++)
        while (z.nw[s] < m)
            zbb_put(&z, s, PPSIM_OP_W);
    for (int s = 0; s < p; s++)
        g_array_set_size(sched->compute[s], z.nf[s] + z.nb[s] + z.nw[s]);
    return g_steal_pointer(&sched);
}

/* ---- search ------------------------------------------------------------------------- */

typedef struct {
    const PpsimCostEstimates *c;
    const gint64 *limit;
    PpsimSchedule *best;
    PpsimTime makespan, span;
    int index;         /* the best's place in the full search's order */
    PpsimTime bound;   /* no candidate may end later than this (0: no bound) */
    PpsimTime fit_min; /* smallest makespan of a candidate that fits (0: none yet) */
    gboolean pruning;  /* stop a candidate's timing once it cannot win */
    gint64 budget;     /* ops the search may time and build (0: no limit) */
    PpsimZbAutoInfo *info;
} ZbSearch;

static gboolean
search_spent(ZbSearch *z)
{
    /* never before a first schedule: a budget cuts the search, it does not make it fail */
    if (z->budget > 0 && z->best != NULL && z->info->spent >= z->budget) {
        z->info->cut = TRUE;
        return TRUE;
    }
    return FALSE;
}

/* Times @cand (consumed) and keeps it if it fits and beats the best so far: a smaller span,
 * then a smaller makespan, then an earlier @index (its place in the full search's order, so
 * that the order candidates are offered in does not change the winner). */
static void
search_offer(ZbSearch *z, PpsimSchedule *cand, const char *label, int index)
{
    PpsimTime mk, span;
    gint64 peak;
    if (cand == NULL)
        return;
    z->info->n_tried++;
    PpsimZbEvalBound bound = {0};
    if (z->pruning) {
        bound.makespan = z->bound;
        bound.span = z->best != NULL ? z->span : 0;
    }
    gboolean fits = ppsim_zb_auto_evaluate_bounded(cand, z->c, z->limit, &bound, &mk, &span, &peak);
    z->info->spent += bound.n_ops;
    if (fits && (z->fit_min == 0 || mk < z->fit_min))
        z->fit_min = mk;
    if (!fits || (z->bound > 0 && mk > z->bound) ||
        (z->best != NULL &&
         (span > z->span ||
          (span == z->span && (mk > z->makespan || (mk == z->makespan && index > z->index)))))) {
        ppsim_schedule_free(cand);
        return;
    }
    if (z->best != NULL)
        ppsim_schedule_free(z->best);
    z->best = cand;
    z->makespan = mk;
    z->span = span;
    z->index = index;
    g_strlcpy(z->info->label, label, sizeof z->info->label);
}

/* Moves the op at @from to index @to of @ops (shifting the ones between). */
static void
ops_move(GArray *ops, guint from, guint to)
{
    PpsimOp op = g_array_index(ops, PpsimOp, from);
    g_array_remove_index(ops, from);
    g_array_insert_val(ops, to, op);
}

/* Whether working cap @cap (1 .. @top) is one of @n evenly spread ones, 1 and @top included. */
static gboolean
cap_wanted(int cap, int top, int n)
{
    if (n >= top)
        return TRUE;
    if (n <= 1)
        return n == 1 && cap == top;
    for (int k = 0; k < n; k++)
        if (1 + (int)llround((double)(top - 1) * k / (n - 1)) == cap)
            return TRUE;
    return FALSE;
}

/* Local search on the best schedule: moves one op of a device up to @reach places earlier
 * or later and keeps the move when the order still runs, fits and is better; sweeps until
 * one finds nothing or @budget op-timings are spent (each move counts the schedule's ops),
 * or the search's budget is. */
static void
search_refine(ZbSearch *z, int reach, gint64 budget)
{
    PpsimSchedule *s = z->best;
    gint64 n_ops = (gint64)ppsim_schedule_n_ops(s);
    gboolean improved = TRUE;
    while (improved && budget > 0 && !search_spent(z)) {
        improved = FALSE;
        for (int d = 0; d < s->n_devices && budget > 0 && !search_spent(z); d++) {
            GArray *ops = s->compute[d];
            for (guint i = 0; i < ops->len && budget > 0 && !search_spent(z); i++) {
                for (int delta = -reach; delta <= reach && budget > 0 && !search_spent(z);
                     delta++) {
                    gint64 j = (gint64)i + delta;
                    if (delta == 0 || j < 0 || j >= ops->len)
                        continue;
                    ops_move(ops, i, (guint)j);
                    PpsimTime mk, span;
                    gint64 peak;
                    budget -= n_ops;
                    PpsimZbEvalBound bound = {.span = z->span, .makespan = z->bound};
                    gboolean ok = ppsim_zb_auto_evaluate_bounded(s, z->c, z->limit, &bound, &mk,
                                                                 &span, &peak);
                    z->info->spent += bound.n_ops;
                    if (ok && (z->bound == 0 || mk <= z->bound) &&
                        (span < z->span || (span == z->span && mk < z->makespan))) {
                        z->span = span;
                        z->makespan = mk;
                        improved = TRUE;
                        break;
                    }
                    ops_move(ops, (guint)j, i);
                }
            }
        }
    }
}

/* Offers the greedy builds and zb-list's schedules over working caps of 1 .. @top M_B on
 * every stage (never above the limit; a stage without activation keeps its limit), the
 * largest caps first (they win most often: a cap below the limit only helps where the
 * warm-up's extra forwards cost more than they hide); each candidate keeps its index in
 * the ascending order of the full search, after the @first handcrafted ones. */
static void
search_built(ZbSearch *z, int p, int m, int top, int first)
{
    const PpsimCostEstimates *costs = z->c;
    g_autofree gint64 *work = g_new(gint64, p);
    /* Budget for large pipelines: a greedy build, a list schedule and their timings cost
     * about p x 3pm steps each, so the working caps are spread evenly over 1 .. top when
     * 8 p x 3pm x top would pass 2e9 (from about p = 64 at m = 256) */
    double n_ops = 3.0 * p * m;
    int n_caps = (int)CLAMP(2e9 / (8 * p * n_ops), 8, top);
    g_autofree int *caps = g_new(int, top);
    int n = 0;
    for (int cap = 1; cap <= top; cap++)
        if (cap_wanted(cap, top, n_caps))
            caps[n++] = cap;
    z->info->n_total = first + 9 * n;
    char label[64];
    for (int k = n - 1; k >= 0 && !search_spent(z); k--) {
        int cap = caps[k];
        for (int s = 0; s < p; s++) {
            gint64 a = costs->stage[s].act, lim = z->limit[s];
            work[s] = a <= 0 ? lim : lim <= 0 ? cap * a : MIN(lim, cap * a);
        }
        for (unsigned choice = 0; choice < 8 && !search_spent(z); choice++) {
            g_snprintf(label, sizeof label, "greedy cap=%d choices=%u", cap, choice);
            z->info->spent += (gint64)n_ops;
            z->info->n_run++;
            search_offer(z, zbb_build(p, m, costs, work, choice), label, first + 9 * k + choice);
        }
        if (search_spent(z))
            break;
        g_autoptr(PpsimSchedule) list = ppsim_schedule_new(p, p, m);
        ppsim_schedule_map_plain(list);
        z->info->spent += (gint64)n_ops;
        z->info->n_run++;
        if (ppsim_zb_list_schedule(list, m, costs, work, NULL)) {
            g_snprintf(label, sizeof label, "list cap=%d", cap);
            search_offer(z, g_steal_pointer(&list), label, first + 9 * k + 8);
        }
    }
}

gint64
ppsim_zb_auto_budget(int p, int m)
{
    /* none (the full search) up to p m = 4096, which covers every instance of the tests and
     * the shipped scenarios; above, 2e7 built or timed ops (about half a second on the
     * development VM), at least 16 candidates' worth (3 p m ops to build, as many to time) */
    if ((gint64)p * m <= 4096)
        return 0;
    return MAX((gint64)20000000, (gint64)16 * 6 * p * m);
}

PpsimSchedule *
ppsim_zb_auto(int p, int m, const PpsimCostEstimates *costs, const gint64 *limit,
              PpsimZbAutoFlags flags, gint64 budget, PpsimZbAutoInfo *info, GError **error)
{
    g_return_val_if_fail(p > 0 && m > 0, NULL);
    PpsimZbAutoInfo local = {0};
    ZbSearch z = {.c = costs, .limit = limit, .budget = budget, .info = info ? info : &local};
    memset(z.info, 0, sizeof *z.info);
    int top = 1; /* largest cap in whole M_B over the stages */
    for (int s = 0; s < p; s++) {
        gint64 a = costs->stage[s].act;
        if (limit[s] > 0 && a > 0 && limit[s] < a) {
            g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                        "memory_limit is below the minimum of 1 M_B (one microbatch's "
                        "activation) on stage %d",
                        s);
            return NULL;
        }
        top = MAX(top, limit[s] <= 0 || a <= 0 ? m : (int)MIN(m, limit[s] / a));
    }
    /* handcrafted orders: 1F1B with B/W split, ZB-H1, ZB-H2 (always timed in full: the
     * fastest that fits bounds every later candidate) */
    static const struct {
        int warmup, delay;
        const char *label;
    } hand[] = {{0, 0, "1f1b-split"}, {0, 1, "zb-h1"}, {1, 2, "zb-h2"}};
    int n_hand = flags & PPSIM_ZB_AUTO_GREEDY_ONLY ? 0 : (int)G_N_ELEMENTS(hand);
    for (int k = 0; k < n_hand; k++) {
        z.info->n_run++;
        search_offer(&z, ppsim_zb_handcrafted(p, m, hand[k].warmup, hand[k].delay), hand[k].label,
                     k);
    }
    z.bound = z.fit_min; /* never slower than a handcrafted order that fits */
    z.pruning = TRUE;
    search_built(&z, p, m, top, n_hand);
    if (z.best == NULL) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "no schedule fits memory_limit");
        return NULL;
    }
    if (!(flags & PPSIM_ZB_AUTO_NO_REFINE))
        search_refine(&z, 8, 10000000);
    z.info->makespan = z.makespan;
    z.info->span = z.span;
    g_debug("zb p=%d m=%d: %d of %d candidates, %" G_GINT64_FORMAT " ops, won by %s (index %d)%s",
            p, m, z.info->n_run, z.info->n_total, z.info->spent, z.info->label, z.index,
            z.info->cut ? ", cut by the budget" : "");
    return z.best;
}
