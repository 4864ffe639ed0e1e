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
 * then to the lower peak, then to the earlier candidate. Deterministic.
 */
#include "sched/vshape/v-run.h"
#include "sched/vshape/v-sched.h"
#include "util/ppsim-error.h"

#include <stdlib.h>
#include <string.h>

/* Keeps @cand in *@best when it is better: smaller makespan, then less idle time inside the
 * devices' spans, then a lower peak; else frees it. */
static void
vs_keep_best(PpsimSchedule **best, PpsimTime best_key[3], PpsimSchedule *cand,
             const PpsimTime key[3])
{
    gboolean better = *best == NULL;
    for (int i = 0; !better && i < 3 && key[i] <= best_key[i]; i++)
        better = key[i] < best_key[i];
    if (!better) {
        ppsim_schedule_free(cand);
        return;
    }
    ppsim_schedule_free(*best);
    *best = cand;
    memcpy(best_key, key, 3 * sizeof(PpsimTime));
}

gboolean
ppsim_vshape_schedule(PpsimSchedule *sched, int m, PpsimVShapeKind kind,
                      const PpsimCostEstimates *costs, const gint64 *limit, GError **error)
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
    if (kind == PPSIM_VSHAPE_ZB) {
        for (guint i = 0; i < 6; i++) { /* uniform-cost templates */
            PpsimSchedule *t = NULL;
            PpsimTime ms, idle;
            if (ppsim_vrun(p, m, frees[i], &unit, limit, NULL, 0, &t, peak, &ms, &idle))
                g_ptr_array_add(tpls, t);
        }
    } else {
        ppsim_vshape_block_templates(kind, p, m, costs, limit, tpls);
    }
    PpsimSchedule *best = NULL;
    PpsimTime best_key[3] = {0, 0, 0};
    VsPolicy tmodes[16] = {
        {VS_TEMPLATE, FALSE, 0, FALSE}, {VS_STRICT, FALSE, 0, FALSE}, {VS_SLOT, FALSE, 0, FALSE}};
    guint nt = 3;
    for (int k = 1; k <= MIN(p, 8); k++)
        tmodes[nt++] = (VsPolicy){VS_TEMPLATE, TRUE, k, FALSE};
    for (guint i = 0; i < nfree + nt * tpls->len; i++) {
        VsPolicy pol = {VS_TEMPLATE, FALSE, VS_B_EARLIEST, FALSE};
        const PpsimSchedule *tpl = NULL;
        if (i < nfree) {
            pol = frees[i];
        } else {
            guint k = i - nfree;
            tpl = g_ptr_array_index(tpls, k / nt);
            pol = tmodes[k % nt];
        }
#ifdef VS_DEBUG_CANDIDATES /* developer aid: -DVS_DEBUG_CANDIDATES, VS_ONLY=<index> */
        if (g_getenv("VS_ONLY") && (guint)atoi(g_getenv("VS_ONLY")) != i)
            continue;
#endif
        PpsimSchedule *cand = NULL;
        PpsimTime key[3];
        if (!ppsim_vrun(p, m, pol, costs, limit, tpl, best ? best_key[0] : 0, &cand, peak, &key[0],
                        &key[1]))
            continue;
        key[2] = 0;
        for (int d = 0; d < p; d++)
            key[2] = MAX(key[2], peak[d]);
#ifdef VS_DEBUG_CANDIDATES
        g_printerr("cand %u: span %lld idle %lld peak %lld mode %d res %d b %d cyc %d\n", i,
                   (long long)key[0], (long long)key[1], (long long)key[2], pol.mode, pol.reserve,
                   pol.bpref, pol.cycle);
#endif
        vs_keep_best(&best, best_key, cand, key);
    }
    /* refinement: the winner's own order as a template, while that improves (at most 8) */
    int rounds = 8;
#ifdef VS_DEBUG_CANDIDATES
    if (g_getenv("VS_NOREFINE"))
        rounds = 0;
#endif
    for (int round = 0; best != NULL && round < rounds; round++) {
        PpsimTime before = best_key[0];
        g_autoptr(PpsimSchedule) tpl = ppsim_schedule_new(p, S, m);
        for (int d = 0; d < p; d++)
            g_array_append_vals(tpl->compute[d], best->compute[d]->data, best->compute[d]->len);
        for (guint k = 0; k < nt; k++) {
            PpsimSchedule *cand = NULL;
            PpsimTime key[3];
            if (!ppsim_vrun(p, m, tmodes[k], costs, limit, tpl, best_key[0], &cand, peak, &key[0],
                            &key[1]))
                continue;
            key[2] = 0;
            for (int d = 0; d < p; d++)
                key[2] = MAX(key[2], peak[d]);
            vs_keep_best(&best, best_key, cand, key);
        }
        if (best_key[0] >= before)
            break;
    }
    /* polish: a W moved one op later (past an F or B) where that shortens the strict replay,
     * among each device's last 8p ops, within a budget of replays (each costs ~6 m p^2) */
    int budget = (int)MIN(256, 50000000 / ((gint64)6 * m * p * p) + 1); /* ~ 50M op steps */
    for (gboolean again = TRUE; best != NULL && again && budget > 0;) {
        again = FALSE;
        for (int d = 0; d < p && budget > 0; d++) {
            GArray *ops = best->compute[d];
            for (int i = (int)ops->len - 2; i >= MAX(0, (int)ops->len - 8 * p) && budget > 0; i--) {
                PpsimOp *a = &g_array_index(ops, PpsimOp, i), *b = a + 1;
                if (a->kind != PPSIM_OP_W || b->kind == PPSIM_OP_W)
                    continue;
                PpsimOp tmp = *a;
                *a = *b, *b = tmp;
                budget--;
                PpsimSchedule *cand = NULL;
                PpsimTime key[3];
                const VsPolicy strict = {VS_STRICT, FALSE, 0, 0, 0, 0};
                if (ppsim_vrun(p, m, strict, costs, limit, best, best_key[0], &cand, peak, &key[0],
                               &key[1])) {
                    key[2] = 0;
                    for (int e = 0; e < p; e++)
                        key[2] = MAX(key[2], peak[e]);
                    if (key[0] < best_key[0]) {
                        vs_keep_best(&best, best_key, cand, key);
                        again = TRUE;
                        break;
                    }
                    ppsim_schedule_free(cand);
                }
                tmp = *a, *a = *b, *b = tmp;
            }
        }
    }
    g_ptr_array_unref(tpls);
    if (best == NULL) {
        g_set_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED,
                    "no schedule makes progress under the cap");
        return FALSE;
    }
    for (int d = 0; d < p; d++) { /* hand the winner's op lists over */
        GArray *tmp = sched->compute[d];
        sched->compute[d] = best->compute[d];
        best->compute[d] = tmp;
    }
    ppsim_schedule_free(best);
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
        if (!ppsim_vshape_schedule(sched, shape->m, kind, params->costs, limit, error)) {
            g_prefix_error(error, "%s: the scenario's memory.limit is too small: ", what);
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
    for (int d = 0; d < p; d++)
        limit[d] = (gint64)(cap * (double)(st[d].act + st[S - 1 - d].act) + 0.5);
    if (!ppsim_vshape_schedule(sched, shape->m, kind, params->costs, limit, error)) {
        g_prefix_error(error, "%s: 'memory_limit' (%g M_B) is too small: ", what, cap);
        return FALSE;
    }
    *out = g_steal_pointer(&sched);
    return TRUE;
}
