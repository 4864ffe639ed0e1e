/* v-sched.c: V-shape schedules (2p stages, device d holds stages d and 2p-1-d) with the
 * backward split into B and W, under a per-device activation cap.
 *
 * Candidates (v-run.c: free runs under several policies; template runs of the [CM] building
 * blocks or of uniform-cost free runs) are simulated on the generator's cost estimates.
 *
 * Templates: for ZB-V, free runs on uniform costs; for V-Half and V-Min, the [CM] building
 * blocks and their compactions under the cap (v-block.c).
 *
 * The smallest estimated makespan wins, ties to less idle time inside the devices' spans,
 * then to the lower peak, then to the candidate earlier in the full search's order. The
 * candidates run most promising first (vs_rank) and a budget of simulated work (option
 * `budget`, search-budget.c) may stop the search early; short of that, the order changes
 * nothing. Deterministic.
 */
#include "sched/vshape/v-run.h"
#include "sched/vshape/v-sched.h"
#include "util/ppsim-error.h"

#include <stdlib.h>
#include <string.h>

/* The search's state: the best candidate so far, keyed by (makespan, idle time inside the
 * devices' spans, peak, candidate index): the index makes the winner the one the full search
 * in index order would keep, whatever order the candidates run in. */
typedef struct {
    int p, m;
    const PpsimCostEstimates *costs;
    const gint64 *limit;
    PpsimVWork *work;
    gint64 *peak;  /* [p] scratch */
    gint64 budget; /* ops the candidates may spend; 0: no limit */
    gboolean cut;  /* some candidate was skipped for the budget */
    int n_run;     /* candidates simulated */
    PpsimSchedule *best;
    PpsimTime key[4];
} VsSearch;

static gboolean
vs_spent(VsSearch *z)
{
    /* never before a first schedule: a budget cuts the search, it does not make it fail */
    if (z->budget > 0 && z->best != NULL && ppsim_vwork_spent(z->work) >= z->budget) {
        z->cut = TRUE;
        return TRUE;
    }
    return FALSE;
}

/* Simulates @pol (template @tpl) as candidate @index and keeps it when it beats the best;
 * returns whether it did. */
static gboolean
vs_try(VsSearch *z, VsPolicy pol, const PpsimSchedule *tpl, PpsimTime index)
{
    PpsimSchedule *cand = NULL;
    PpsimTime key[4];
    z->n_run++;
    if (!ppsim_vrun(z->work, pol, z->costs, z->limit, tpl, z->best ? z->key[0] : 0, &cand, z->peak,
                    &key[0], &key[1]))
        return FALSE;
    key[2] = 0;
    for (int d = 0; d < z->p; d++)
        key[2] = MAX(key[2], z->peak[d]);
    key[3] = index;
#ifdef VS_DEBUG_CANDIDATES
    g_printerr("cand %lld: span %lld idle %lld peak %lld mode %d res %d b %d cyc %d\n",
               (long long)index, (long long)key[0], (long long)key[1], (long long)key[2], pol.mode,
               pol.reserve, pol.bpref, pol.cycle);
#endif
    gboolean better = z->best == NULL;
    for (int i = 0; !better && i < 4 && key[i] <= z->key[i]; i++)
        better = key[i] < z->key[i];
    if (!better) {
        ppsim_vwork_recycle(z->work, cand);
        return FALSE;
    }
    ppsim_vwork_recycle(z->work, z->best);
    z->best = cand;
    memcpy(z->key, key, sizeof key);
    return TRUE;
}

/* Candidates of the first pass, in index order: the free-mode policies, then every template
 * in each template mode. */
typedef struct {
    VsPolicy pol;
    int tpl;   /* -1: free mode, else the template's index */
    int index; /* in the full search's order */
    int rank;  /* how promising (lower first) */
} VsCand;

static int
vs_cand_cmp(const void *a, const void *b)
{
    const VsCand *x = a, *y = b;
    return x->rank != y->rank ? (x->rank > y->rank) - (x->rank < y->rank)
                              : (x->index > y->index) - (x->index < y->index);
}

/* How promising candidate @c is (lower first): the candidates that most often give the best
 * makespan on the comparison grids (p = 16, 32; m = p .. 4p and 64; unit, F:B:W = 1:2:1 with
 * p2p, and the dgx-a100-80gb preset), picked greedily so that each closes most of the gap
 * the earlier ones leave; then the rest in index order. {template, mode}: template -1 is a
 * free-mode policy (mode: its index in frees), else a template and its mode in tmodes. */
static int
vs_rank(PpsimVShapeKind kind, const VsCand *c, guint nfree, guint nt)
{
    static const int zbv[][2] = {{-1, 98}, {-1, 94}, {-1, 105}, {-1, 88}, {-1, 89}, {-1, 5}};
    static const int half[][2] = {{1, 0}, {-1, 1}, {-1, 66}, {-1, 72}, {7, 1}, {0, 9}, {2, 1}};
    static const int min[][2] = {{0, 0}, {1, 1}, {0, 9}, {1, 0}, {0, 8}, {0, 2}, {-1, 22}};
    const int(*order)[2] = kind == PPSIM_VSHAPE_ZB ? zbv : kind == PPSIM_VSHAPE_HALF ? half : min;
    int n = kind == PPSIM_VSHAPE_ZB     ? (int)G_N_ELEMENTS(zbv)
            : kind == PPSIM_VSHAPE_HALF ? (int)G_N_ELEMENTS(half)
                                        : (int)G_N_ELEMENTS(min);
    int tpl = c->tpl, mode = c->tpl < 0 ? c->index : (int)((guint)c->index - nfree) % (int)nt;
    for (int i = 0; i < n; i++)
        if (order[i][0] == tpl && order[i][1] == mode)
            return i;
    return n;
}

gboolean
ppsim_vshape_schedule(PpsimSchedule *sched, int m, PpsimVShapeKind kind,
                      const PpsimCostEstimates *costs, const gint64 *limit, gint64 budget,
                      PpsimVShapeInfo *info, GError **error)
{
    int p = sched->n_devices, S = 2 * p;
    g_return_val_if_fail(sched->n_stages == S && costs->n_stages == S, FALSE);
    /* uniform-cost copy of the estimates (same memory): ZB-V's templates */
    g_autofree PpsimStageEstimate *unit_st = g_memdup2(costs->stage, S * sizeof(*unit_st));
    for (int s = 0; s < S; s++)
        unit_st[s].f_ps = unit_st[s].b_ps = unit_st[s].w_ps = 1000;
    PpsimCostEstimates unit = *costs;
    unit.stage = unit_st;
    unit.comm_ps = 0;

    g_autofree gint64 *peak = g_new(gint64, p);
    VsSearch z = {.p = p,
                  .m = m,
                  .costs = costs,
                  .limit = limit,
                  .work = ppsim_vwork_new(p, m),
                  .peak = peak,
                  .budget = budget};
    GPtrArray *tpls = g_ptr_array_new_with_free_func((GDestroyNotify)ppsim_schedule_free);
    /* free-mode policies: (warm-up reserve, cycle, B preference); the first six, with no
     * reserve and cycle 0 or 1, also make ZB-V's uniform-cost templates */
    static const int warms[][3] = {{0, 0, 0}, {1, 0, 0}, {0, 0, 1}, {0, 1, 1}, {0, 2, 1}};
    VsPolicy frees[G_N_ELEMENTS(warms) * 6 * 4];
    guint nfree = 0;
    for (guint w = 0; w < G_N_ELEMENTS(warms); w++)
        for (int cyc = 0; cyc < 6; cyc++)
            for (int b = 0; b < (cyc < 2 ? 3 : 4); b++) /* "balance" only alternates */
                frees[nfree++] = (VsPolicy){VS_FREE, warms[w][0], b, cyc, warms[w][1], warms[w][2]};
    /* templates, made on first use: ZB-V's 6, or the building block's 10 in 4 groups */
    static const int group_first[] = {0, 3, 6, 8, 10};
    guint n_tpls = kind == PPSIM_VSHAPE_ZB ? 6 : 10;
    VsPolicy tmodes[16] = {
        {VS_TEMPLATE, FALSE, 0, FALSE}, {VS_STRICT, FALSE, 0, FALSE}, {VS_SLOT, FALSE, 0, FALSE}};
    guint nt = 3;
    for (int k = 1; k <= MIN(p, 8); k++)
        tmodes[nt++] = (VsPolicy){VS_TEMPLATE, TRUE, k, FALSE};
    guint n_cands = nfree + nt * n_tpls;
    g_autofree VsCand *cands = g_new(VsCand, n_cands);
    g_autofree int *tpl_at = g_new(int, n_tpls); /* template k's index in tpls, -1: none */
    for (guint i = 0; i < n_cands; i++) {
        VsCand *c = &cands[i];
        c->index = (int)i;
        c->tpl = i < nfree ? -1 : (int)((i - nfree) / nt);
        c->pol = i < nfree ? frees[i] : tmodes[(i - nfree) % nt];
        c->rank = vs_rank(kind, c, nfree, nt);
    }
    qsort(cands, n_cands, sizeof *cands, vs_cand_cmp);
    for (guint k = 0; k < n_tpls; k++)
        tpl_at[k] = -2; /* not made yet */
    guint n_first = 0;  /* candidates of the first pass reached */
    for (; n_first < n_cands && !vs_spent(&z); n_first++) {
        guint i = n_first;
        const VsCand *c = &cands[i];
        const PpsimSchedule *tpl = NULL;
#ifdef VS_DEBUG_CANDIDATES /* developer aid: -DVS_DEBUG_CANDIDATES, VS_ONLY=<index> */
        if (g_getenv("VS_ONLY") && atoi(g_getenv("VS_ONLY")) != c->index)
            continue;
#endif
        if (c->tpl >= 0) {
            if (tpl_at[c->tpl] == -2 && kind != PPSIM_VSHAPE_ZB) { /* the block's group */
                int g = 0;
                while (group_first[g + 1] <= c->tpl)
                    g++;
                guint before = tpls->len;
                ppsim_vshape_block_templates(kind, p, m, costs, limit, g, tpls);
                g_assert(tpls->len - before == (guint)(group_first[g + 1] - group_first[g]));
                for (int k = group_first[g]; k < group_first[g + 1]; k++)
                    tpl_at[k] = (int)(before + (guint)(k - group_first[g]));
            }
            if (tpl_at[c->tpl] == -2) { /* ZB-V: a free run on uniform costs */
                PpsimSchedule *t = NULL;
                PpsimTime ms, idle;
                tpl_at[c->tpl] = -1;
                if (ppsim_vrun(z.work, frees[c->tpl], &unit, limit, NULL, 0, &t, peak, &ms,
                               &idle)) {
                    tpl_at[c->tpl] = (int)tpls->len;
                    g_ptr_array_add(tpls, t);
                }
            }
            if (tpl_at[c->tpl] < 0)
                continue;
            tpl = g_ptr_array_index(tpls, tpl_at[c->tpl]);
        }
        vs_try(&z, c->pol, tpl, c->index);
    }
    /* refinement: the winner's own order as a template, while that improves (at most 8) */
    int rounds = 8;
#ifdef VS_DEBUG_CANDIDATES
    if (g_getenv("VS_NOREFINE"))
        rounds = 0;
#endif
    PpsimTime index = n_cands; /* later candidates lose ties */
    for (int round = 0; z.best != NULL && round < rounds && !vs_spent(&z); round++) {
        PpsimTime before = z.key[0];
        g_autoptr(PpsimSchedule) tpl = ppsim_schedule_new(p, S, m);
        for (int d = 0; d < p; d++)
            g_array_append_vals(tpl->compute[d], z.best->compute[d]->data, z.best->compute[d]->len);
        for (guint k = 0; k < nt && !vs_spent(&z); k++)
            vs_try(&z, tmodes[k], tpl, index++);
        if (z.key[0] >= before)
            break;
    }
    /* polish: a W moved one op later (past an F or B) where that shortens the strict replay,
     * among each device's last 8p ops, within a budget of replays (each costs ~6 m p^2) */
    int replays = (int)MIN(256, 50000000 / ((gint64)6 * m * p * p) + 1); /* ~ 50M op steps */
    for (gboolean again = TRUE; z.best != NULL && again && replays > 0 && !vs_spent(&z);) {
        again = FALSE;
        for (int d = 0; d < p && replays > 0 && !vs_spent(&z); d++) {
            GArray *ops = z.best->compute[d];
            for (int i = (int)ops->len - 2;
                 i >= MAX(0, (int)ops->len - 8 * p) && replays > 0 && !vs_spent(&z); i--) {
                PpsimOp *a = &g_array_index(ops, PpsimOp, i), *b = a + 1;
                if (a->kind != PPSIM_OP_W || b->kind == PPSIM_OP_W)
                    continue;
                PpsimOp tmp = *a;
                *a = *b, *b = tmp;
                replays--;
                PpsimSchedule *cand = NULL;
                PpsimTime key[4];
                const VsPolicy strict = {VS_STRICT, FALSE, 0, 0, 0, 0};
                z.n_run++;
                if (ppsim_vrun(z.work, strict, costs, limit, z.best, z.key[0], &cand, peak, &key[0],
                               &key[1])) {
                    if (key[0] < z.key[0]) {
                        key[2] = 0;
                        for (int e = 0; e < p; e++)
                            key[2] = MAX(key[2], peak[e]);
                        key[3] = index++;
                        ppsim_vwork_recycle(z.work, z.best);
                        z.best = cand;
                        memcpy(z.key, key, sizeof key);
                        again = TRUE;
                        break;
                    }
                    ppsim_vwork_recycle(z.work, cand);
                }
                tmp = *a, *a = *b, *b = tmp;
            }
        }
    }
    if (info != NULL) {
        info->cut = z.cut;
        info->n_run = (int)n_first;
        info->n_total = (int)n_cands;
        info->spent = ppsim_vwork_spent(z.work);
        info->makespan = z.best ? z.key[0] : 0;
    }
    g_debug("vshape p=%d m=%d: %d of %u first-pass candidates (%d in all), %" G_GINT64_FORMAT
            " ops, %" G_GINT64_FORMAT " waits, won by index %" G_GINT64_FORMAT "%s",
            p, m, (int)n_first, n_cands, z.n_run, ppsim_vwork_spent(z.work),
            ppsim_vwork_waits(z.work), z.key[3], z.cut ? ", cut by the budget" : "");
    g_ptr_array_unref(tpls);
    ppsim_vwork_free(z.work);
    if (z.best == NULL) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "no schedule makes progress under the cap");
        return FALSE;
    }
    for (int d = 0; d < p; d++) { /* hand the winner's op lists over */
        GArray *tmp = sched->compute[d];
        sched->compute[d] = z.best->compute[d];
        z.best->compute[d] = tmp;
    }
    ppsim_schedule_free(z.best);
    return TRUE;
}

/* The default budget (`budget: auto`): none (the full search) up to p m = 4096, which covers
 * every instance of the tests and the shipped scenarios; above, 4e6 ops of work (about half
 * a second on the development VM), at least 10 candidates' worth (6 p m ops each). */
static gint64
vs_auto_budget(int p, int m)
{
    if ((gint64)p * m <= 4096)
        return 0;
    return MAX((gint64)4000000, (gint64)10 * 6 * p * m);
}

/* Runs the search under the budget option and reports a cut. */
static gboolean
vs_schedule(PpsimSchedule *sched, const PpsimScheduleParams *params, PpsimVShapeKind kind,
            const gint64 *limit, const char *what, GError **error)
{
    int p = sched->n_devices, m = sched->n_microbatches;
    gint64 budget;
    gboolean is_auto;
    if (!ppsim_search_budget_get(params->options, what, vs_auto_budget(p, m), &budget, &is_auto,
                                 error))
        return FALSE;
    PpsimVShapeInfo info;
    if (!ppsim_vshape_schedule(sched, m, kind, params->costs, limit, budget, &info, error))
        return FALSE;
    if (info.cut)
        ppsim_search_budget_note(
            params->choices, budget, is_auto, info.n_run, info.n_total, info.makespan,
            ppsim_makespan_lower_bound(params->costs, sched->stage_device, sched->n_stages, p, m));
    return TRUE;
}

gboolean
ppsim_vshape_generate(const PpsimPipelineShape *shape, const PpsimScheduleParams *params,
                      PpsimVShapeKind kind, double default_cap_mb, const char *what,
                      PpsimSchedule **out, GError **error)
{
    int p = shape->p, S = 2 * p;
    gboolean has_option = ppsim_options_is_set(params->options, "memory_limit");
    double cap =
        has_option ? ppsim_options_get_double(params->options, "memory_limit") : default_cap_mb;
    g_autoptr(PpsimSchedule) sched = ppsim_schedule_new(p, S, shape->m);
    ppsim_schedule_map_vshape(sched);
    g_autofree gint64 *limit = g_new(gint64, p);
    gboolean from_scenario = FALSE;
    if (!has_option && !ppsim_memory_cap_default(params->costs, sched->stage_device, S, p, limit,
                                                 &from_scenario, what, error))
        return FALSE;
    if (from_scenario) {
        ppsim_memory_cap_note(params->choices, params->costs, limit, p);
        GError *local = NULL;
        if (!vs_schedule(sched, params, kind, limit, what, &local)) {
            if (local->code == PPSIM_SCHED_ERROR_UNSUPPORTED &&
                !g_str_has_prefix(local->message, what))
                g_prefix_error(&local, "%s: the scenario's memory.limit is too small: ", what);
            g_propagate_error(error, local);
            return FALSE;
        }
        *out = g_steal_pointer(&sched);
        return TRUE;
    }
    if (!(cap > 0)) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "%s: 'memory_limit' must be positive (M_B units), got %g", what, cap);
        return FALSE;
    }
    if (!has_option) {
        char value[32];
        g_snprintf(value, sizeof value, "%g", cap);
        ppsim_choice_add(params->choices, "memory_limit", value,
                         "default %s M_B of the device's two stages; memory.limit unset",
                         kind == PPSIM_VSHAPE_ZB     ? "p"
                         : kind == PPSIM_VSHAPE_HALF ? "(p+2)//2"
                                                     : "(p+4)//3");
    }
    const PpsimStageEstimate *st = params->costs->stage;
    /* a device never holds more than every microbatch of both its stages: a larger cap is
     * that one (and a huge one would overflow the conversion) */
    double cap_used = MIN(cap, 2.0 * shape->m);
    for (int d = 0; d < p; d++)
        limit[d] = (gint64)(cap_used * (double)(st[d].act + st[S - 1 - d].act) + 0.5);
    GError *local = NULL;
    if (!vs_schedule(sched, params, kind, limit, what, &local)) {
        if (local->code == PPSIM_SCHED_ERROR_UNSUPPORTED && !g_str_has_prefix(local->message, what))
            g_prefix_error(&local, "%s: 'memory_limit' (%g M_B) is too small: ", what, cap);
        g_propagate_error(error, local);
        return FALSE;
    }
    *out = g_steal_pointer(&sched);
    return TRUE;
}
