/* plan.c: the planner's entry points (plan.h): phase 1, the ILP or its stand-in, the
 * smallest memory limit that fits when none does, and phase 4, the scenario keys. */
#include "plan/plan.h"
#include "milp/milp.h"
#include "util/fmt.h"
#include "util/ppsim-error.h"
#include "sim/sim.h"

#include <math.h>
#include <string.h>

#define GIB (1024.0 * 1024.0 * 1024.0)

/* Local search on memory alone: the heuristic's smallest limit (an upper bound on the
 * true one). Every stage in its most frugal mode, then (untied chunks) single-layer moves
 * between stages while the peak over devices drops. */
static double
plan_min_memory_heuristic(const PpsimPlanProblem *pb)
{
    int frugal = 0;
    for (int k = 1; k < pb->n_modes; k++)
        if (pb->layer[k].act + pb->layer[k].static_mem <
            pb->layer[frugal].act + pb->layer[frugal].static_mem)
            frugal = k;
    g_autoptr(PpsimPlanAssignment) cur = ppsim_plan_even(pb, frugal);
    for (gboolean moved = !pb->tie_chunks; moved;) { /* tied chunks: whole devices only */
        moved = FALSE;
        for (int from = 0; from < pb->n_stages && !moved; from++)
            for (int to = 0; to < pb->n_stages && !moved; to++) {
                if (to == from ||
                    cur->layers[from] <= (from == 0 || from == pb->n_stages - 1 ? 0 : 1))
                    continue;
                g_autoptr(PpsimPlanAssignment) cand = ppsim_plan_assignment_copy(cur);
                cand->layers[from]--;
                cand->layers[to]++;
                ppsim_plan_evaluate(pb, cand);
                if (cand->peak_memory < cur->peak_memory - 0.5) {
                    ppsim_plan_assignment_free(cur);
                    cur = g_steal_pointer(&cand);
                    moved = TRUE;
                }
            }
    }
    return cur->peak_memory;
}

/* The error of no plan fitting, naming the smallest limit that would. */
static void
plan_no_fit(const PpsimScenario *sc, const PpsimPlanProblem *pb, gboolean exact, double need,
            GError **error)
{
    g_autoptr(GString) msg = g_string_new(NULL);
    g_string_append_printf(msg, "%s: no plan for schedule '%s' fits memory.limit = ",
                           sc->path ? sc->path : "", pb->schedule);
    ppsim_fmt_fixed(msg, pb->gpu_limit / GIB, 2);
    g_string_append(msg, " GiB per device; the smallest limit that fits is ");
    /* rounded up to the printed precision, so that limit fits */
    ppsim_fmt_fixed(msg, ceil(need / GIB * 100.0) / 100.0, 2);
    g_string_append_printf(msg, " GiB%s",
                           exact ? "" : " or less (a heuristic's bound: ppsim has no CBC)");
    g_set_error_literal(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_LIMIT, msg->str);
}

/* One solve: the ILP, or the local search. *@best is NULL when nothing fits. */
static gboolean
plan_solve(PpsimPlan *plan, gboolean ilp, double limit_s, GError **error)
{
    ppsim_plan_assignment_free(plan->best);
    plan->best = NULL;
    if (ilp) {
        GError *local = NULL;
        plan->best = ppsim_plan_ilp(plan->problem, FALSE, limit_s, plan, &local);
        if (local != NULL) {
            g_propagate_error(error, local);
            return FALSE;
        }
        return TRUE;
    }
    plan->best = ppsim_plan_local_search(plan->problem);
    if (!plan->best->fits)
        g_clear_pointer(&plan->best, ppsim_plan_assignment_free);
    return TRUE;
}

PpsimPlan *
ppsim_plan_new(const PpsimScenario *sc, const PpsimPlanOptions *opts, GError **error)
{
    const char *schedule = opts && opts->schedule ? opts->schedule : NULL;
    if (schedule == NULL && sc->schedules && sc->schedules->len > 0)
        schedule = ((const PpsimScheduleSpec *)g_ptr_array_index(sc->schedules, 0))->name;
    g_autoptr(PpsimPlan) plan = g_new0(PpsimPlan, 1);
    plan->problem = ppsim_plan_problem_new(sc, schedule ? schedule : "1f1b", error);
    if (plan->problem == NULL)
        return NULL;
    const PpsimPlanProblem *pb = plan->problem;
    gboolean ilp = ppsim_milp_available() && !(opts && opts->heuristic);
    double limit_s = opts ? opts->time_limit_s : 0;
    g_strlcpy(plan->method, ilp ? "ilp" : "heuristic", sizeof(plan->method));
    g_strlcpy(plan->source, plan->method, sizeof(plan->source));
    if (!ilp)
        g_strlcpy(plan->status, "local-search", sizeof(plan->status));
    /* solve; while the plan's own op order shows new check points, add them and solve again */
    gboolean changed = TRUE;
    for (plan->rounds = 0; changed && plan->rounds < 8; plan->rounds++) {
        if (!plan_solve(plan, ilp, limit_s, error))
            return NULL;
        if (plan->best == NULL)
            break;
        if (!ppsim_plan_problem_refresh(plan->problem, sc, plan->best, &changed, error))
            return NULL;
    }
    if (plan->best != NULL && changed) /* the last refresh added points: re-check the plan */
        ppsim_plan_evaluate(pb, plan->best);
    if (plan->best == NULL || !plan->best->fits) {
        if (!ilp) {
            plan_no_fit(sc, pb, FALSE, plan_min_memory_heuristic(pb), error);
            return NULL;
        }
        g_autoptr(PpsimPlanAssignment) low = ppsim_plan_ilp(pb, TRUE, limit_s, NULL, error);
        if (low == NULL)
            return NULL;
        plan_no_fit(sc, pb, TRUE, low->peak_memory, error);
        return NULL;
    }
    return g_steal_pointer(&plan);
}

static void
candidate_free(gpointer data)
{
    PpsimPlanCandidate *c = data;
    ppsim_plan_assignment_free(c->a);
    ppsim_run_result_free(c->res);
    g_free(c);
}

static int
choose_mode_index(const PpsimPlanProblem *pb, PpsimRecompute r)
{
    for (int k = 0; k < pb->n_modes; k++)
        if (pb->mode[k] == r)
            return k;
    return -1;
}

/* The scenario's own split (its stage_layers, else the even one) and recompute, as an
 * assignment; NULL when the planner's modes cannot say it (per-stage recompute lists, or
 * a mode the planner dropped). */
static PpsimPlanAssignment *
choose_unplanned(const PpsimPlanProblem *pb, const PpsimScenario *sc)
{
    int mode = choose_mode_index(pb, sc->model.recompute);
    if (mode < 0 || sc->model.stage_recompute != NULL)
        return NULL;
    PpsimPlanAssignment *a = ppsim_plan_even(pb, mode);
    const GArray *own = sc->model.stage_layers;
    if (own != NULL && (int)own->len == pb->n_stages) {
        for (int s = 0; s < pb->n_stages; s++)
            a->layers[s] = g_array_index(own, int, s);
        ppsim_plan_evaluate(pb, a);
    }
    return a;
}

/* Replays candidate @c (FALSE with @error when it cannot be: e.g. its generator refuses
 * the split under the limit). */
static gboolean
choose_replay(const PpsimScenario *sc, const PpsimPlanProblem *pb, PpsimPlanCandidate *c,
              GError **error)
{
    g_autoptr(PpsimScheduleSpec) spec =
        ppsim_plan_schedule_spec(sc, pb->schedule, !c->free_cap, error);
    if (spec == NULL)
        return FALSE;
    PpsimScenario *planned = ppsim_plan_scenario(sc, pb, c->a);
    c->res = ppsim_sim_run_spec(planned, spec, 0, error);
    ppsim_plan_scenario_free(planned);
    return c->res != NULL;
}

const PpsimPlanCandidate *
ppsim_plan_chosen(const PpsimPlan *plan, const GPtrArray *cands)
{
    gsize n = strlen(plan->source);
    for (guint i = 0; cands != NULL && i < cands->len; i++) {
        const PpsimPlanCandidate *c = g_ptr_array_index(cands, i);
        if (c->free_cap == plan->free_cap && strncmp(c->name, plan->source, n) == 0 &&
            (c->name[n] == '\0' || c->name[n] == '+'))
            return c;
    }
    return NULL;
}

GPtrArray *
ppsim_plan_choose(PpsimPlan *plan, const PpsimScenario *sc, GError **error)
{
    const PpsimPlanProblem *pb = plan->problem;
    g_autoptr(GPtrArray) cands = g_ptr_array_new_with_free_func(candidate_free);
    const char *names[4] = {plan->method, "even-full", "greedy", "unplanned"};
    int full = choose_mode_index(pb, PPSIM_RECOMPUTE_FULL);
    gboolean free_cap = ppsim_plan_has_free_cap(sc, pb->schedule);
    for (int cap = 0; cap < 1 + free_cap; cap++)
        for (int k = 0; k < 4; k++) {
            PpsimPlanAssignment *a = NULL;
            if (k == 0)
                a = ppsim_plan_assignment_copy(plan->best);
            else if (k == 1)
                a = ppsim_plan_even(pb, full >= 0 ? full : pb->n_modes - 1);
            else if (k == 2) {
                a = ppsim_plan_even(pb, 0);
                ppsim_plan_greedy_modes(pb, a);
            } else if (cap == free_cap) /* the scenario as given: zb-v sizes its own cap */
                a = choose_unplanned(pb, sc);
            if (a == NULL)
                continue;
            PpsimPlanCandidate *c = g_new0(PpsimPlanCandidate, 1);
            g_snprintf(c->name, sizeof c->name, "%s%s", names[k], cap && k < 3 ? "+cap" : "");
            c->a = a;
            c->free_cap = cap;
            g_ptr_array_add(cands, c);
            GError *local = NULL;
            if (!choose_replay(sc, pb, c, &local)) {
                if (cands->len == 1) { /* the optimiser's own plan must replay */
                    g_propagate_error(error, local);
                    return NULL;
                }
                g_clear_error(&local); /* a baseline its generator refuses is no candidate */
            }
        }
    const PpsimPlanCandidate *best = NULL;
    for (guint i = 0; i < cands->len; i++) {
        const PpsimPlanCandidate *c = g_ptr_array_index(cands, i);
        if (c->res == NULL || !ppsim_run_result_fits(c->res))
            continue;
        if (best == NULL || c->res->makespan_ps < best->res->makespan_ps)
            best = c;
    }
    if (best != NULL && best != g_ptr_array_index(cands, 0)) {
        ppsim_plan_assignment_free(plan->best);
        plan->best = ppsim_plan_assignment_copy(best->a);
        g_strlcpy(plan->source, best->name, sizeof plan->source);
        char *plus = strchr(plan->source, '+');
        if (plus != NULL)
            *plus = '\0';
        plan->free_cap = best->free_cap;
    }
    return g_steal_pointer(&cands);
}

void
ppsim_plan_free(PpsimPlan *plan)
{
    if (plan == NULL)
        return;
    ppsim_plan_problem_free(plan->problem);
    ppsim_plan_assignment_free(plan->best);
    g_free(plan);
}

PpsimScenario *
ppsim_plan_scenario(const PpsimScenario *sc, const PpsimPlanProblem *pb,
                    const PpsimPlanAssignment *a)
{
    PpsimScenario *out = g_new(PpsimScenario, 1);
    *out = *sc;
    out->model.recompute = PPSIM_RECOMPUTE_NONE; /* mode 0: the rest of a mixed stage */
    out->model.stage_layers = g_array_new(FALSE, FALSE, sizeof(int));
    out->model.stage_recompute = g_array_new(FALSE, FALSE, sizeof(int));
    out->model.stage_recompute_layers = g_array_new(FALSE, FALSE, sizeof(int));
    for (int s = 0; s < a->n_stages; s++) {
        int r = (int)pb->mode[a->mode[s]], k = a->mode[s] == 0 ? -1 : a->mixed[s];
        g_array_append_val(out->model.stage_layers, a->layers[s]);
        g_array_append_val(out->model.stage_recompute, r);
        g_array_append_val(out->model.stage_recompute_layers, k);
    }
    return out;
}

void
ppsim_plan_scenario_free(PpsimScenario *planned)
{
    if (planned == NULL)
        return;
    g_array_free(planned->model.stage_layers, TRUE);
    g_array_free(planned->model.stage_recompute, TRUE);
    g_array_free(planned->model.stage_recompute_layers, TRUE);
    g_free(planned);
}

static void
plan_ms(GString *out, double ms)
{
    ppsim_fmt_fixed(out, ms, 3);
    g_string_append(out, " ms");
}

void
ppsim_plan_write_fragment(GString *out, const PpsimScenario *sc, const PpsimPlan *plan)
{
    const PpsimPlanProblem *pb = plan->problem;
    const PpsimPlanAssignment *a = plan->best;
    g_string_append_printf(out, "# ppsim plan for scenario '%s', schedule %s (p=%d, v=%d, m=%d)\n",
                           sc->name ? sc->name : "", pb->schedule, pb->p, pb->v, pb->m);
    if (g_strcmp0(plan->method, "ilp") == 0)
        g_string_append_printf(out, "# method: ILP on CBC, %s\n", plan->status);
    else
        g_string_append(out, "# method: HEURISTIC local search (built without CBC, or "
                             "--heuristic): not proved optimal\n");
    if (strcmp(plan->source, "ilp") != 0 && strcmp(plan->source, "heuristic") != 0)
        g_string_append_printf(out,
                               "# the %s candidate: it replayed faster than the optimiser's "
                               "plan\n",
                               plan->source);
    if (plan->free_cap)
        g_string_append(out, "# zb-v's cap sized from memory.limit (it replayed faster than p)\n");
    g_string_append(out, "# predicted makespan ");
    plan_ms(out, a->makespan_ms);
    g_string_append(out, "; bubbles summed over devices: recompute ");
    plan_ms(out, a->b_recompute_ms);
    g_string_append(out, ", imbalance ");
    plan_ms(out, a->b_imbalance_ms);
    g_string_append(out, ", warm-up/cool-down ");
    plan_ms(out, a->b_preparation_ms);
    g_string_append(out, "\n# predicted peak memory ");
    ppsim_fmt_fixed(out, a->peak_memory / GIB, 2);
    g_string_append(out, " GiB per device");
    if (pb->limit > 0) {
        g_string_append(out, " (limit ");
        ppsim_fmt_fixed(out, pb->gpu_limit / GIB, 2);
        g_string_append(out, " GiB)");
    }
    g_string_append(out, "\n# apply with: ppsim run SCENARIO --with THIS_FILE\n");
    g_string_append(out, "model:\n  stage_layers: [");
    for (int s = 0; s < a->n_stages; s++)
        g_string_append_printf(out, "%s%d", s ? ", " : "", a->layers[s]);
    g_string_append(out, "]\n  recompute: none\n  stage_recompute: [");
    for (int s = 0; s < a->n_stages; s++) {
        const char *name = ppsim_recompute_name(pb->mode[a->mode[s]]);
        if (a->mode[s] != 0 && a->mixed[s] >= 0)
            g_string_append_printf(out, "%s{%s: %d}", s ? ", " : "", name, a->mixed[s]);
        else
            g_string_append_printf(out, "%s%s", s ? ", " : "", name);
    }
    g_autofree char *schedule = ppsim_plan_schedule_text(sc, pb->schedule, !plan->free_cap);
    g_string_append_printf(out, "]\nschedule: %s\n", schedule);
}
