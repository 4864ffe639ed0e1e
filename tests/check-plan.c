/* check-plan.c: the holistic planner (src/plan) and what it rests on: per-stage recompute
 * in the cost model, the bubble breakdown of every run (its parts sum to the lost time
 * exactly), a hand-solved instance, the ILP against brute force on tiny scenarios, the
 * model's memory against the replay, the no-fit error naming a limit that does fit, and the
 * fragment round trip. Tests that need CBC return early without it. */
#include "ppsim-test.h"
#include "cost/cost-model.h"
#include "cost/kernels.h"
#include "cost/memory.h"
#include "milp/milp.h"
#include "plan/plan.h"
#include "util/ppsim-error.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <sys/wait.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GIB (1024.0 * 1024.0 * 1024.0)

/* A small GPT-style model: layers and p and m set by the caller. */
static PpsimScenario *
tiny_scenario(int layers, int pp, int m, const char *schedule, const char *limit)
{
    g_autofree char *yaml =
        g_strdup_printf("name: tiny\n"
                        "hardware: {preset: dgx-a100-80gb}\n"
                        "model: {layers: %d, hidden: 2048, heads: 16, "
                        "seq_len: 4096, vocab: 32000}\n"
                        "training: {pp: %d, microbatches: %d, chunks: 2}\n"
                        "schedule: %s\n"
                        "%s%s%s",
                        layers, pp, m, schedule, limit ? "memory: {limit: " : "",
                        limit ? limit : "", limit ? "}\n" : "");
    g_autoptr(GError) error = NULL;
    PpsimScenario *sc = ppsim_scenario_parse(yaml, strlen(yaml), "tiny.yaml", ".", NULL, &error);
    ppsim_assert_no_error(error);
    return sc;
}

/* model.stage_recompute: stage 0 fully recomputed keeps 2sbh per layer and re-runs the
 * forward in B; stage 1 as model.recompute says; a list of the wrong length is refused. */
START_TEST(test_stage_recompute_costs)
{
    g_autoptr(PpsimScenario) sc = tiny_scenario(8, 2, 4, "1f1b", NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimCosts) plain = ppsim_costs_new(sc, 2, &error);
    ppsim_assert_no_error(error);
    PpsimScenario copy = *sc;
    g_autoptr(GArray) rc = g_array_new(FALSE, FALSE, sizeof(int));
    int modes[2] = {PPSIM_RECOMPUTE_FULL, PPSIM_RECOMPUTE_NONE};
    g_array_append_vals(rc, modes, 2);
    copy.model.stage_recompute = rc;
    g_autoptr(PpsimCosts) c = ppsim_costs_new(&copy, 2, &error);
    ppsim_assert_no_error(error);
    double s = 4096, h = 2048;
    ck_assert_int_eq(c->stage[0].recompute, PPSIM_RECOMPUTE_FULL);
    ck_assert_int_eq(c->stage[1].recompute, PPSIM_RECOMPUTE_NONE);
    /* 4 layers of 2sbh, plus the embedding's sbh dropout mask ([KOR] §4.3) */
    ck_assert_int_eq(c->stage[0].est.act, (gint64)(4 * 2 * s * h + s * h));
    ck_assert_int_eq(c->stage[1].est.act, plain->stage[1].est.act);
    ck_assert_int_eq(c->stage[0].est.f_ps, plain->stage[0].est.f_ps);
    /* B re-runs the 4 layers' forward, not the embedding's (kernel model: the embedding's
     * gather and dropout are memory-bound time of their own): the forward of a stage of the
     * same 4 layers without embedding or head */
    PpsimTime refwd = c->stage[0].est.b_ps - plain->stage[0].est.b_ps;
    ck_assert_int_eq(c->stage[0].b_recompute_ps, refwd);
    PpsimStageCost layers_only = {.layers = 4};
    ppsim_kernels_fill_stage(&layers_only, sc);
    ck_assert(llabs(refwd - layers_only.est.f_ps) <= 2);
    ck_assert_int_lt(refwd, plain->stage[0].est.f_ps);
    ck_assert_int_eq(c->stage[1].b_recompute_ps, 0);
    ck_assert_int_eq(plain->stage[0].b_recompute_ps, 0);
    /* {full: 2} of stage 0's 4 layers: half-way between none and full, exactly */
    const char *const half[] = {"model.stage_recompute=[{full: 2}, none]", NULL};
    g_autofree char *y2 = g_strdup_printf("name: tiny\nmodel: {layers: 8, hidden: 2048, heads: "
                                          "16, seq_len: 4096, vocab: 32000}\n"
                                          "training: {pp: 2, microbatches: 4}\nschedule: 1f1b\n");
    g_autoptr(PpsimScenario) mix =
        ppsim_scenario_parse(y2, strlen(y2), "mix.yaml", ".", half, &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(g_array_index(mix->model.stage_recompute_layers, int, 0), 2);
    ck_assert_int_eq(g_array_index(mix->model.stage_recompute_layers, int, 1), -1);
    g_autoptr(PpsimCosts) cm = ppsim_costs_new(mix, 2, &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(cm->stage[0].est.act * 2, plain->stage[0].est.act + c->stage[0].est.act);
    ck_assert(llabs(cm->stage[0].est.b_ps * 2 - plain->stage[0].est.b_ps - c->stage[0].est.b_ps) <=
              4);
    ck_assert(llabs(cm->stage[0].b_recompute_ps * 2 - c->stage[0].b_recompute_ps) <= 4);
    const char *const over[] = {"model.stage_recompute=[{full: 5}, none]", NULL};
    g_autoptr(PpsimScenario) too =
        ppsim_scenario_parse(y2, strlen(y2), "mix.yaml", ".", over, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimCosts) none5 = ppsim_costs_new(too, 2, &error);
    ck_assert_ptr_null(none5);
    ppsim_assert_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE);
    ck_assert_msg(strstr(error->message, "puts 5 layers of stage 0 in mode 'full', but the "
                                         "stage has 4") != NULL,
                  "%s", error->message);
    g_clear_error(&error);
    const char *yaml = "model: {layers: 8, hidden: 1024, heads: 8, seq_len: 1024,\n"
                       "        stage_recompute: [full]}\n"
                       "training: {pp: 2, microbatches: 4}\n";
    g_autoptr(PpsimScenario) bad =
        ppsim_scenario_parse(yaml, strlen(yaml), "bad.yaml", ".", NULL, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimCosts) none = ppsim_costs_new(bad, 2, &error);
    ck_assert_ptr_null(none);
    ppsim_assert_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_VALUE);
    ck_assert_msg(strstr(error->message, "bad.yaml:2:26: 'model.stage_recompute' must list 2 "
                                         "stages, got 1") != NULL,
                  "%s", error->message);
    g_clear_error(&error);
    /* written by --set, the list is named by its flag, not by a place in the file */
    const char *even = "model: {layers: 8, hidden: 1024, heads: 8, seq_len: 1024}\n"
                       "training: {pp: 2, microbatches: 4}\n";
    const char *const sets[] = {"model.stage_recompute=[full]", "model.stage_layers=[3,3]", NULL};
    for (int i = 0; i < 2; i++) {
        const char *const one[] = {sets[i], NULL};
        g_autoptr(PpsimScenario) s1 =
            ppsim_scenario_parse(even, strlen(even), "ok.yaml", ".", one, &error);
        ppsim_assert_no_error(error);
        g_autoptr(PpsimCosts) c1 = ppsim_costs_new(s1, 2, &error);
        ck_assert_ptr_null(c1);
        g_autofree char *key = g_strndup(sets[i], strcspn(sets[i], "="));
        g_autofree char *want = g_strdup_printf("--set %s: '%s' must list 2 stages", key, key);
        ck_assert_msg(strstr(error->message, want) != NULL, "%s", error->message);
        g_clear_error(&error);
    }
}
END_TEST

/* Every device of every run: the five parts sum to the lost time, which is the idle time
 * plus the recompute time; the idle parts of the old attribution sum to makespan - busy;
 * the busiest device has no imbalance. Runs cover R ops (1f1b recompute), folded recompute
 * (stage_recompute), offload (po-h, over a 10 GB/s PCIe link so that its transfers show: at
 * the preset's 25 GB/s this scenario hides them all) and a plain zb-v. */
START_TEST(test_bubbles_sum_exactly)
{
    struct {
        const char *schedule, *key, *value;
        const char *const ov[3];
    } cases[] = {
        {"1f1b", NULL, NULL, {NULL}},
        {"1f1b", "recompute", "0.5", {NULL}},
        {"po-h", NULL, NULL, {"hardware.pcie.bandwidth=10GB/s"}},
        {"zb-v", NULL, NULL, {NULL}},
        {"1f1b", NULL, NULL, {"model.stage_recompute=[full,none,full,none,full,none,full,none]"}},
        {"zb-h1",
         NULL,
         NULL,
         {"model.stage_recompute=[{full: 2},none,full,none,{full: 1},none,{full: 3},none]"}},
    };
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
        g_autoptr(PpsimScenario) sc = ppsim_test_load_scenario("scenarios/a100_8gpu.yaml",
                                                               cases[c].ov[0] ? cases[c].ov : NULL);
        g_autoptr(GError) error = NULL;
        g_autoptr(PpsimRunResult) res =
            ppsim_test_run_option(sc, cases[c].schedule, cases[c].key, cases[c].value, &error);
        ppsim_assert_no_error(error);
        PpsimTime max_busy = 0, recompute = 0, offload = 0, imbalance = 0;
        for (int d = 0; d < res->p; d++)
            max_busy = MAX(max_busy, res->devices[d].busy_ps);
        for (int d = 0; d < res->p; d++) {
            const PpsimDeviceResult *dv = &res->devices[d];
            PpsimTime idle = res->makespan_ps - dv->busy_ps;
            ck_assert_int_eq(dv->idle_warmup_ps + dv->idle_wait_ps + dv->idle_transfer_ps +
                                 dv->idle_cooldown_ps,
                             idle);
            PpsimTime parts[5] = {dv->bubble_recompute_ps, dv->bubble_imbalance_ps,
                                  dv->bubble_preparation_ps, dv->bubble_transfer_ps,
                                  dv->bubble_offload_ps};
            PpsimTime sum = 0;
            for (int k = 0; k < 5; k++) {
                ck_assert_msg(parts[k] >= 0, "case %u device %d part %d < 0", c, d, k);
                sum += parts[k];
            }
            ck_assert_int_eq(sum, dv->bubble_lost_ps);
            ck_assert_int_eq(dv->bubble_lost_ps, idle + dv->bubble_recompute_ps);
            ck_assert(dv->bubble_recompute_ps >= dv->recompute_ps);
            if (dv->busy_ps == max_busy)
                ck_assert_int_eq(dv->bubble_imbalance_ps, 0);
            recompute += dv->bubble_recompute_ps;
            offload += dv->bubble_offload_ps;
            imbalance += dv->bubble_imbalance_ps;
        }
        gboolean recomputes =
            cases[c].key != NULL ||
            (cases[c].ov[0] != NULL && g_str_has_prefix(cases[c].ov[0], "model.stage_recompute"));
        ck_assert_msg((recompute > 0) == recomputes, "case %u recompute %" G_GINT64_FORMAT, c,
                      recompute);
        if (strcmp(cases[c].schedule, "po-h") == 0)
            ck_assert(offload > 0);
        ck_assert(imbalance > 0); /* the head makes the last stage the busiest */
    }
}
END_TEST

/* A hand-built instance (p = 2, m = 4, L = 4, 1F1B, no H, T = one layer's time):
 * none: F 1, BW 2, 2 units of activation; full: F 1, BW 3, 1 unit. Device 0 holds 2
 * microbatches at its peak, device 1 one. Limit 6: stage 0 with n layers, a of them not
 * recomputed, needs 2 (n + a) <= 6; stage 1 fits all none. With D0 = 4n - a, D1 = 15 - 3n
 * and M = max(4 D0 + D1, 4 D1 + D0): n = 2, a = 1 gives D = (7, 9), M = max(37, 43) = 43;
 * n = 2, a = 0 (whole stages) 44; n = 1 51; n = 3 54; n = 0 60. So 43 with mixing, 44
 * with whole-stage modes. */
static PpsimPlanProblem *
hand_problem(double limit)
{
    PpsimPlanProblem *pb = g_new0(PpsimPlanProblem, 1);
    pb->schedule = g_strdup("1f1b");
    pb->p = 2, pb->v = 1, pb->n_stages = 2, pb->m = 4, pb->layers = 4;
    pb->stage_device = g_new(int, 2);
    pb->stage_device[0] = 0, pb->stage_device[1] = 1;
    pb->n_modes = 2;
    pb->mode[0] = PPSIM_RECOMPUTE_NONE, pb->mode[1] = PPSIM_RECOMPUTE_FULL;
    pb->layer[0] = (PpsimPlanUnit){.f_ms = 1, .b_ms = 2, .act = 2, .act_w = 2};
    pb->layer[1] = (PpsimPlanUnit){.f_ms = 1, .b_ms = 3, .r_ms = 1, .act = 1, .act_w = 1};
    pb->tail = (PpsimPlanUnit){.f_ms = 1, .b_ms = 2};
    pb->prep_f = pb->prep_b = pb->prep_w = 1;
    pb->limit = limit;
    pb->points = g_ptr_array_new();
    for (int d = 0; d < 2; d++) {
        PpsimPlanPoint *pt = g_new0(PpsimPlanPoint, 1);
        pt->device = d;
        pt->n_full = g_new0(int, 2);
        pt->n_w = g_new0(int, 2);
        pt->n_full[d] = d == 0 ? 2 : 1;
        g_ptr_array_add(pb->points, pt);
    }
    return pb;
}

static void
hand_problem_free(PpsimPlanProblem *pb)
{
    for (guint i = 0; i < pb->points->len; i++) {
        PpsimPlanPoint *pt = g_ptr_array_index(pb->points, i);
        g_free(pt->n_full);
        g_free(pt->n_w);
        g_free(pt);
    }
    g_ptr_array_unref(pb->points);
    pb->points = NULL;
    ppsim_plan_problem_free(pb);
}

START_TEST(test_hand_instance)
{
    PpsimPlanProblem *pb = hand_problem(6);
    g_autoptr(PpsimPlanAssignment) brute = ppsim_plan_brute_force(pb);
    ck_assert(brute->fits);
    ck_assert_double_eq_tol(brute->makespan_ms, 43, 1e-9);
    ck_assert_int_eq(brute->layers[0], 2);
    ck_assert_int_eq(pb->mode[brute->mode[0]], PPSIM_RECOMPUTE_FULL);
    ck_assert_int_eq(ppsim_plan_in_mode(brute, 0), 1);
    ck_assert_int_eq(pb->mode[brute->mode[1]], PPSIM_RECOMPUTE_NONE);
    /* bubbles: p M = 86 = useful m (7 - 1 + 9) = 60 + B_R + B_I + B_P with B_R = m x 1
     * recomputed layer = 4, B_I = m (9 - 7) = 8, B_P = 2 x 43 - 4 x 2 x 9 = 14 */
    ck_assert_double_eq_tol(brute->b_recompute_ms, 4, 1e-9);
    ck_assert_double_eq_tol(brute->b_imbalance_ms, 8, 1e-9);
    ck_assert_double_eq_tol(brute->b_preparation_ms, 14, 1e-9);
    /* the local search keeps whole-stage modes: 44 */
    g_autoptr(PpsimPlanAssignment) heur = ppsim_plan_local_search(pb);
    ck_assert(heur->fits);
    ck_assert_double_eq_tol(heur->makespan_ms, 44, 1e-9);
    if (ppsim_milp_available()) {
        g_autoptr(GError) error = NULL;
        g_autoptr(PpsimPlanAssignment) ilp = ppsim_plan_ilp(pb, FALSE, 10, NULL, &error);
        ppsim_assert_no_error(error);
        ck_assert(ilp != NULL && ilp->fits);
        ck_assert_double_eq_tol(ilp->makespan_ms, 43, 1e-9);
        ck_assert_int_eq(ilp->layers[0], 2);
        ck_assert_int_eq(ppsim_plan_in_mode(ilp, 0), 1);
        /* the smallest limit, all full: [1, 3] holds 2 x 1 and 3 x 1 units, so 3 ([0, 4]
         * and [2, 2] need 4) */
        g_autoptr(PpsimPlanAssignment) low = ppsim_plan_ilp(pb, TRUE, 10, NULL, &error);
        ppsim_assert_no_error(error);
        ck_assert_double_eq_tol(low->peak_memory, 3, 1e-9);
        ck_assert_int_eq(low->layers[0], 1);
    }
    hand_problem_free(pb);
    /* no limit: [3, 1] and [2, 2] none both give 42 */
    pb = hand_problem(0);
    g_autoptr(PpsimPlanAssignment) free_best = ppsim_plan_brute_force(pb);
    ck_assert_double_eq_tol(free_best->makespan_ms, 42, 1e-9);
    hand_problem_free(pb);
}
END_TEST

/* The model's units add up to the cost model's stages: any split and modes priced by
 * plan-model.c equal ppsim_costs_new on the same keys (to rounding, 1 ps per op). */
START_TEST(test_units_match_cost_model)
{
    g_autoptr(PpsimScenario) sc = tiny_scenario(10, 3, 6, "1f1b", NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimPlanProblem) pb = ppsim_plan_problem_new(sc, "1f1b", &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(pb->n_modes, 2); /* selective = none with FlashAttention */
    g_autoptr(PpsimPlanAssignment) a = ppsim_plan_assignment_new(3);
    int layers[3] = {2, 5, 3}, modes[3] = {1, 1, 0}, mixed[3] = {-1, 2, -1};
    memcpy(a->layers, layers, sizeof layers);
    memcpy(a->mode, modes, sizeof modes);
    memcpy(a->mixed, mixed, sizeof mixed); /* stage 1: 2 of 5 layers fully recomputed */
    ppsim_plan_evaluate(pb, a);
    PpsimScenario *planned = ppsim_plan_scenario(sc, pb, a);
    g_autoptr(PpsimCosts) c = ppsim_costs_new(planned, 3, &error);
    ppsim_assert_no_error(error);
    for (int s = 0; s < 3; s++) {
        const PpsimPlanUnit *u = &pb->layer[modes[s]], *z = &pb->layer[0];
        int k = ppsim_plan_in_mode(a, s);
        double f = k * u->f_ms + (layers[s] - k) * z->f_ms + (s == 0 ? pb->head_mode[0].f_ms : 0) +
                   (s == 2 ? pb->tail.f_ms : 0);
        double b = k * u->b_ms + (layers[s] - k) * z->b_ms + (s == 0 ? pb->head_mode[0].b_ms : 0) +
                   (s == 2 ? pb->tail.b_ms : 0);
        double act = k * u->act + (layers[s] - k) * z->act + (s == 0 ? pb->head_mode[0].act : 0) +
                     (s == 2 ? pb->tail.act : 0);
        ck_assert_double_eq_tol(f, (double)c->stage[s].est.f_ps / PPSIM_PS_PER_MS, 1e-6);
        ck_assert_double_eq_tol(b, (double)c->stage[s].est.b_ps / PPSIM_PS_PER_MS, 1e-6);
        ck_assert_double_eq_tol(act, (double)c->stage[s].est.act, 1.0);
    }
    ck_assert_int_gt(c->stage[1].b_recompute_ps, 0);
    /* the model's 1F1B memory is the replay's: peak at the first device's warm-up */
    g_autoptr(PpsimScheduleSpec) spec = ppsim_schedule_spec_new("1f1b");
    g_autoptr(PpsimRunResult) res = ppsim_sim_run_spec(planned, spec, 0, &error);
    ppsim_assert_no_error(error);
    ck_assert_double_eq_tol(a->peak_memory, (double)ppsim_run_result_max_peak_memory(res), 16.0);
    ppsim_plan_scenario_free(planned);
}
END_TEST

/* The ILP's optimum is brute force's on tiny scenarios, with and without a binding memory
 * limit, for 1F1B and ZB-H1; and the local search is never better. */
START_TEST(test_ilp_matches_brute_force)
{
    const char *limits[] = {NULL, "7GiB", "5GiB", "4GiB"};
    const char *families[] = {"1f1b", "zb-h1"};
    int checked = 0;
    for (guint f = 0; f < G_N_ELEMENTS(families); f++)
        for (guint i = 0; i < G_N_ELEMENTS(limits); i++) {
            g_autoptr(PpsimScenario) sc = tiny_scenario(7, 3, 4, families[f], limits[i]);
            g_autoptr(GError) error = NULL;
            g_autoptr(PpsimPlanProblem) pb = ppsim_plan_problem_new(sc, families[f], &error);
            ppsim_assert_no_error(error);
            g_autoptr(PpsimPlanAssignment) brute = ppsim_plan_brute_force(pb);
            g_autoptr(PpsimPlanAssignment) ilp = ppsim_plan_ilp(pb, FALSE, 30, NULL, &error);
            ppsim_assert_no_error(error);
            ck_assert_msg((ilp != NULL) == brute->fits, "%s limit %s: ilp %p fits %d", families[f],
                          limits[i], (void *)ilp, brute->fits);
            if (ilp == NULL)
                continue;
            checked++;
            ck_assert_msg(fabs(ilp->makespan_ms - brute->makespan_ms) <= 1e-6 * brute->makespan_ms,
                          "%s limit %s: ilp %.6f brute %.6f", families[f], limits[i],
                          ilp->makespan_ms, brute->makespan_ms);
            g_autoptr(PpsimPlanAssignment) heur = ppsim_plan_local_search(pb);
            ck_assert(!heur->fits || heur->makespan_ms >= brute->makespan_ms - 1e-6);
        }
    ck_assert_int_ge(checked, 4);
}
END_TEST

/* 1F1B on an even split: the model's makespan is the replay's (to 0.01%), the optimizer
 * step that ends the iteration included (without it the prediction was 0.5% short: Llama 3
 * 8B on 4 A100s, 12,129 ms for a 12,188 ms replay). */
START_TEST(test_even_split_exact)
{
    g_autofree char *path = ppsim_test_src_path("scenarios/plan/llama3-8b-a100.yaml");
    const char *sets[] = {"memory.limit=200GiB", NULL};
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc = ppsim_scenario_load_file(path, sets, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimPlanProblem) pb = ppsim_plan_problem_new(sc, "1f1b", &error);
    ppsim_assert_no_error(error);
    ck_assert(pb->layer[0].opt_ms > 0);
    g_autoptr(PpsimPlanAssignment) a = ppsim_plan_even(pb, 0);
    PpsimScenario *planned = ppsim_plan_scenario(sc, pb, a);
    g_autoptr(PpsimScheduleSpec) spec = ppsim_schedule_spec_new("1f1b");
    g_autoptr(PpsimRunResult) res = ppsim_sim_run_spec(planned, spec, 0, &error);
    ppsim_assert_no_error(error);
    double replayed = (double)res->makespan_ps / PPSIM_PS_PER_MS;
    ck_assert_msg(fabs(a->makespan_ms - replayed) <= 1e-4 * replayed, "model %.3f replay %.3f",
                  a->makespan_ms, replayed);
    ppsim_plan_scenario_free(planned);
}
END_TEST

/* Untied chunks (interleaved, v = 3, 32 layers: not a multiple): each stage holds within a
 * layer of its device's first stage, and the plan replays within 3% of its prediction. Free
 * to unbalance them, the ILP planned [0 1f 1f 1f 1 1f 1f 1f 6f 7(5f) 7(5f) 5(3f)]: predicted
 * 12,216 ms, replayed 15,980 (+24%); now 12,226 and 12,345. */
START_TEST(test_untied_chunks_balanced)
{
    g_autofree char *path = ppsim_test_src_path("scenarios/plan/llama3-8b-a100.yaml");
    const char *sets[] = {"memory.limit=46GiB", "training.chunks=3", NULL};
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc = ppsim_scenario_load_file(path, sets, &error);
    ppsim_assert_no_error(error);
    PpsimPlanOptions o = {.schedule = "interleaved", .time_limit_s = 30};
    g_autoptr(PpsimPlan) plan = ppsim_plan_new(sc, &o, &error);
    ppsim_assert_no_error(error);
    const PpsimPlanProblem *pb = plan->problem;
    ck_assert(!pb->tie_chunks && pb->v == 3);
    const PpsimPlanAssignment *a = plan->best;
    for (int s = 0; s < a->n_stages; s++) {
        int first = pb->stage_device[s]; /* interleaved: stage d is device d's first */
        ck_assert_msg(abs(a->layers[s] - a->layers[first]) <= 1, "stage %d: %d against %d", s,
                      a->layers[s], a->layers[first]);
    }
    double predicted = a->makespan_ms;
    g_autoptr(GPtrArray) cands = ppsim_plan_choose(plan, sc, &error);
    ppsim_assert_no_error(error);
    const PpsimPlanCandidate *own = g_ptr_array_index(cands, 0);
    double replayed = (double)own->res->makespan_ps / PPSIM_PS_PER_MS;
    ck_assert_msg(fabs(predicted - replayed) <= 0.03 * replayed, "predicted %.3f replayed %.3f",
                  predicted, replayed);
}
END_TEST

/* Multi-head latent attention: the planner offers mla_up_proj (its up-projections re-run)
 * after none, before moe and full, a layer in it keeping less and taking longer in B than in
 * none, its F unchanged. */
START_TEST(test_mla_modes)
{
    const char *yaml = "name: tinymla\n"
                       "hardware: {preset: dgx-h100-80gb}\n"
                       "model: {layers: 7, hidden: 2048, heads: 16, seq_len: 4096, vocab: 32000,\n"
                       "        mlp: swiglu, moe: {experts: 8, top_k: 2, expert_ffn_hidden: 1024,\n"
                       "                           dense_layers: 2},\n"
                       "        mla: {q_lora_rank: 512, kv_lora_rank: 256, qk_nope_head_dim: 128,\n"
                       "              qk_rope_head_dim: 64, v_head_dim: 128}}\n"
                       "training: {pp: 3, microbatches: 4}\n"
                       "schedule: 1f1b\n";
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc =
        ppsim_scenario_parse(yaml, strlen(yaml), "mla.yaml", ".", NULL, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimPlanProblem) pb = ppsim_plan_problem_new(sc, "1f1b", &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(pb->n_modes, 4);
    ck_assert_int_eq(pb->mode[0], PPSIM_RECOMPUTE_NONE);
    ck_assert_int_eq(pb->mode[1], PPSIM_RECOMPUTE_MLA_UP);
    ck_assert_int_eq(pb->mode[2], PPSIM_RECOMPUTE_MOE);
    ck_assert_int_eq(pb->mode[3], PPSIM_RECOMPUTE_FULL);
    const PpsimPlanUnit *none = &pb->layer[0], *up = &pb->layer[1];
    ck_assert_double_lt(up->act, none->act);
    ck_assert_double_gt(up->b_ms, none->b_ms);
    ck_assert_double_eq_tol(up->f_ms, none->f_ms, 1e-9);
}
END_TEST

/* A small mixture of experts: 7 layers, the first 2 dense, on 3 stages. */
static PpsimScenario *
moe_scenario(const char *schedule, const char *limit)
{
    g_autofree char *yaml = g_strdup_printf(
        "name: tinymoe\n"
        "hardware: {preset: dgx-h100-80gb}\n"
        "model: {layers: 7, hidden: 2048, heads: 16, seq_len: 4096, vocab: 32000,\n"
        "        mlp: swiglu, moe: {experts: 8, top_k: 2, expert_ffn_hidden: 1024,\n"
        "                           dense_layers: 2}}\n"
        "training: {pp: 3, microbatches: 4}\n"
        "schedule: %s\n"
        "%s%s%s",
        schedule, limit ? "memory: {limit: " : "", limit ? limit : "", limit ? "}\n" : "");
    g_autoptr(GError) error = NULL;
    PpsimScenario *sc = ppsim_scenario_parse(yaml, strlen(yaml), "moe.yaml", ".", NULL, &error);
    ppsim_assert_no_error(error);
    return sc;
}

/* A mixture of experts: the modes are none, moe and full (selective a no-op under
 * FlashAttention); the unit is the MoE layer and the 2 dense layers are in H, priced in the
 * first stage's mode, so whole and mixed stages, the first among them, add up to the cost
 * model's stages (to rounding) and the 1F1B peak to the replay's. A first stage holding only
 * its dense layers in mode moe changes nothing: it is none. */
START_TEST(test_moe_units_match_cost_model)
{
    g_autoptr(PpsimScenario) sc = moe_scenario("1f1b", NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimPlanProblem) pb = ppsim_plan_problem_new(sc, "1f1b", &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(pb->n_modes, 3);
    ck_assert_int_eq(pb->mode[0], PPSIM_RECOMPUTE_NONE);
    ck_assert_int_eq(pb->mode[1], PPSIM_RECOMPUTE_MOE);
    ck_assert_int_eq(pb->mode[2], PPSIM_RECOMPUTE_FULL);
    ck_assert_int_eq(pb->head_layers, 2);
    static const int cases[][3][3] = {
        /* {layers, mode index, mixed} per stage */
        {{3, 1, -1}, {2, 2, -1}, {2, 0, -1}},
        {{4, 2, 3}, {2, 1, 1}, {1, 0, -1}},
        {{2, 0, -1}, {3, 1, -1}, {2, 2, 1}},
        {{5, 1, 4}, {1, 2, -1}, {1, 1, -1}},
    };
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(PpsimPlanAssignment) a = ppsim_plan_assignment_new(3);
        for (int s = 0; s < 3; s++) {
            a->layers[s] = cases[i][s][0];
            a->mode[s] = cases[i][s][1];
            a->mixed[s] = cases[i][s][2];
        }
        ppsim_plan_evaluate(pb, a);
        PpsimScenario *planned = ppsim_plan_scenario(sc, pb, a);
        g_autoptr(PpsimCosts) c = ppsim_costs_new(planned, 3, &error);
        ppsim_assert_no_error(error);
        for (int s = 0; s < 3; s++) {
            int k = a->mode[s], km = ppsim_plan_in_mode(a, s), n = a->layers[s];
            const PpsimPlanUnit *u = &pb->layer[k], *z = &pb->layer[0];
            const PpsimPlanUnit *h = &pb->head_mode[k]; /* [0]: mode none's */
            double f = km * u->f_ms + (n - km) * z->f_ms + (s == 0 ? h->f_ms : 0) +
                       (s == 2 ? pb->tail.f_ms : 0);
            double b = km * u->b_ms + (n - km) * z->b_ms + (s == 0 ? h->b_ms : 0) +
                       (s == 2 ? pb->tail.b_ms : 0);
            double act = km * u->act + (n - km) * z->act + (s == 0 ? h->act : 0) +
                         (s == 2 ? pb->tail.act : 0);
            ck_assert_msg(fabs(f - (double)c->stage[s].est.f_ps / PPSIM_PS_PER_MS) < 1e-6 &&
                              fabs(b - (double)c->stage[s].est.b_ps / PPSIM_PS_PER_MS) < 1e-6 &&
                              fabs(act - (double)c->stage[s].est.act) <= 16.0,
                          "case %u stage %d: f %.9f b %.9f act %.0f against %.9f %.9f %.0f", i, s,
                          f, b, act, (double)c->stage[s].est.f_ps / PPSIM_PS_PER_MS,
                          (double)c->stage[s].est.b_ps / PPSIM_PS_PER_MS,
                          (double)c->stage[s].est.act);
        }
        g_autoptr(PpsimScheduleSpec) spec = ppsim_schedule_spec_new("1f1b");
        g_autoptr(PpsimRunResult) res = ppsim_sim_run_spec(planned, spec, 0, &error);
        ppsim_assert_no_error(error);
        ck_assert_double_eq_tol(a->peak_memory, (double)ppsim_run_result_max_peak_memory(res),
                                64.0);
        ppsim_plan_scenario_free(planned);
    }
    g_autoptr(PpsimPlanAssignment) dense = ppsim_plan_assignment_new(3);
    int layers[3] = {2, 3, 2}, modes[3] = {1, 1, 0};
    for (int s = 0; s < 3; s++) {
        dense->layers[s] = layers[s];
        dense->mode[s] = modes[s];
        dense->mixed[s] = -1;
    }
    ppsim_plan_evaluate(pb, dense);
    ck_assert_int_eq(dense->mode[0], 0);
    ck_assert_int_eq(dense->mode[1], 1);
}
END_TEST

/* The ILP's optimum is brute force's on the mixture of experts, with and without a binding
 * memory limit; every plan keeps the dense layers on the first stage. */
START_TEST(test_moe_ilp_matches_brute_force)
{
    const char *limits[] = {NULL, "6.9GiB", "6GiB", "5.8GiB"};
    int checked = 0, recomputed = 0;
    for (guint i = 0; i < G_N_ELEMENTS(limits); i++) {
        g_autoptr(PpsimScenario) sc = moe_scenario("1f1b", limits[i]);
        g_autoptr(GError) error = NULL;
        g_autoptr(PpsimPlanProblem) pb = ppsim_plan_problem_new(sc, "1f1b", &error);
        ppsim_assert_no_error(error);
        g_autoptr(PpsimPlanAssignment) brute = ppsim_plan_brute_force(pb);
        g_autoptr(PpsimPlanAssignment) ilp = ppsim_plan_ilp(pb, FALSE, 30, NULL, &error);
        ppsim_assert_no_error(error);
        ck_assert_msg((ilp != NULL) == brute->fits, "limit %s: ilp %p fits %d", limits[i],
                      (void *)ilp, brute->fits);
        if (ilp == NULL)
            continue;
        checked++;
        ck_assert_int_ge(ilp->layers[0], 2);
        ck_assert_msg(fabs(ilp->makespan_ms - brute->makespan_ms) <= 1e-6 * brute->makespan_ms,
                      "limit %s: ilp %.6f brute %.6f", limits[i], ilp->makespan_ms,
                      brute->makespan_ms);
        for (int s = 0; s < 3; s++)
            recomputed += pb->mode[ilp->mode[s]] == PPSIM_RECOMPUTE_MOE;
    }
    ck_assert_int_ge(checked, 3);
    ck_assert_int_gt(recomputed, 0); /* some limit makes mode moe worth it */
}
END_TEST

/* ZB-V runs no rounds through its chunks: a device's two stages are paced by its load, not
 * by the slowest stage of each chunk. Qwen3-30B-A3B cut to 16 layers (a 151,936-word head,
 * as heavy as several layers, on device 0 beside the embedding) plans [1 3 2 2 2 2 3 1],
 * moving layers off device 0, and the model predicts its replay within 3% (the chunk
 * bound put it 27% slower, at the even split's time). */
START_TEST(test_zbv_not_paced)
{
    static const char yaml[] = "name: zbv-head\n"
                               "hardware: {preset: dgx-h100-80gb}\n"
                               "model: {preset: qwen3-30b-a3b, layers: 16, seq_len: 8192}\n"
                               "parallel: {tp: 1, pp: 4, dp: 2, ep: 2}\n"
                               "training: {pp: 4, microbatches: 16}\n"
                               "schedule: zb-v\n"
                               "memory: {limit: 70GiB}\n";
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc =
        ppsim_scenario_parse(yaml, strlen(yaml), "zbv.yaml", ".", NULL, &error);
    ppsim_assert_no_error(error);
    PpsimPlanOptions o = {.schedule = "zb-v", .time_limit_s = 30};
    g_autoptr(PpsimPlan) plan = ppsim_plan_new(sc, &o, &error);
    ppsim_assert_no_error(error);
    ck_assert(!plan->problem->paced);
    double predicted = plan->best->makespan_ms;
    ck_assert_int_lt(plan->best->layers[0], 2);
    g_autoptr(GPtrArray) cands = ppsim_plan_choose(plan, sc, &error);
    ppsim_assert_no_error(error);
    const PpsimPlanCandidate *own = g_ptr_array_index(cands, 0);
    ck_assert(own->res != NULL);
    double replayed = (double)own->res->makespan_ps / PPSIM_PS_PER_MS;
    ck_assert_msg(fabs(predicted - replayed) <= 0.03 * replayed, "predicted %.3f replayed %.3f",
                  predicted, replayed);
}
END_TEST

/* A V-shape's device holds the tied embedding and the last stage's copy of it once, in the
 * replay (sim-memory.c) and so in the planner's tail: zb-v's T keeps V x h fewer weights,
 * gradients and optimizer states than 1f1b's. */
START_TEST(test_vshape_tied_tail)
{
    g_autoptr(PpsimScenario) sc = tiny_scenario(8, 4, 16, "zb-v", NULL);
    sc->model.tied_embeddings = TRUE;
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimPlanProblem) v = ppsim_plan_problem_new(sc, "zb-v", &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimPlanProblem) one = ppsim_plan_problem_new(sc, "1f1b", &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(v->stage_device[0], v->stage_device[v->n_stages - 1]);
    PpsimModelStateBytes copy;
    ppsim_mem_model_state(32000.0 * 2048, &sc->training, 0, 1, &copy);
    ck_assert_double_eq_tol(one->tail.static_mem - v->tail.static_mem,
                            copy.weights + copy.gradients + copy.optimizer, 1.0);
}
END_TEST

/* No plan fits: the error names a limit, and that limit (exactly as printed) does fit. */
START_TEST(test_no_fit_names_smallest_limit)
{
    for (int heuristic = 0; heuristic < 2; heuristic++) {
        if (!heuristic && !ppsim_milp_available())
            continue;
        g_autoptr(PpsimScenario) sc = tiny_scenario(8, 2, 8, "1f1b", "2GiB");
        PpsimPlanOptions o = {.heuristic = heuristic, .time_limit_s = 30};
        g_autoptr(GError) error = NULL;
        g_autoptr(PpsimPlan) none = ppsim_plan_new(sc, &o, &error);
        ppsim_assert_error(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_LIMIT);
        const char *at = strstr(error->message, "the smallest limit that fits is ");
        ck_assert_msg(at != NULL, "%s", error->message);
        double gib = g_ascii_strtod(at + strlen("the smallest limit that fits is "), NULL);
        ck_assert(gib > 2.0);
        sc->memory_limit_bytes = (guint64)(gib * GIB);
        g_clear_error(&error);
        g_autoptr(PpsimPlan) plan = ppsim_plan_new(sc, &o, &error);
        ppsim_assert_no_error(error);
        ck_assert(plan->best->fits);
        if (!heuristic) { /* exact: 1% less does not fit */
            sc->memory_limit_bytes = (guint64)(gib * 0.99 * GIB);
            g_autoptr(PpsimPlan) tight = ppsim_plan_new(sc, &o, &error);
            ck_assert_ptr_null(tight);
            ppsim_assert_error(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_LIMIT);
        }
    }
}
END_TEST

/* A time limit too short for the solver to answer (it is stopped at the deadline) keeps the
 * local search's plan, reported as a time limit, instead of failing as if nothing fitted;
 * where the local search has no plan that fits, the error names the time limit. */
START_TEST(test_ilp_cut_off_keeps_start)
{
    g_autoptr(PpsimScenario) sc = tiny_scenario(12, 4, 8, "1f1b", "6GiB");
    PpsimPlanOptions o = {.time_limit_s = 1e-4};
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimPlan) plan = ppsim_plan_new(sc, &o, &error);
    ppsim_assert_no_error(error);
    ck_assert_str_eq(plan->status, "time_limit");
    ck_assert(plan->best != NULL && plan->best->fits);
    g_autoptr(PpsimPlanAssignment) start = ppsim_plan_local_search(plan->problem);
    ck_assert(fabs(plan->best->makespan_ms - start->makespan_ms) <= 1e-9 * start->makespan_ms);
    /* nothing the local search has fits: the error says the time limit stopped the solver */
    g_autoptr(PpsimScenario) tight = tiny_scenario(8, 2, 8, "1f1b", "2GiB");
    g_autoptr(PpsimPlan) none = ppsim_plan_new(tight, &o, &error);
    ck_assert_ptr_null(none);
    ppsim_assert_error(error, PPSIM_SIM_ERROR, PPSIM_SIM_ERROR_LIMIT);
    ck_assert_msg(strstr(error->message, "time limit") != NULL, "%s", error->message);
}
END_TEST

/* Planned under a tight limit: the replay fits it, is no slower than the even split with
 * full recompute, and the fragment round-trips through --with's overrides. */
START_TEST(test_plan_replay_and_fragment)
{
    g_autoptr(PpsimScenario) sc = tiny_scenario(12, 4, 8, "1f1b", "6GiB");
    PpsimPlanOptions o = {.time_limit_s = 30};
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimPlan) plan = ppsim_plan_new(sc, &o, &error);
    ppsim_assert_no_error(error);
    ck_assert_str_eq(plan->method, ppsim_milp_available() ? "ilp" : "heuristic");
    PpsimScenario *planned = ppsim_plan_scenario(sc, plan->problem, plan->best);
    g_autoptr(PpsimScheduleSpec) spec = ppsim_schedule_spec_new("1f1b");
    g_autoptr(PpsimRunResult) res = ppsim_sim_run_spec(planned, spec, 0, &error);
    ppsim_assert_no_error(error);
    ppsim_plan_scenario_free(planned);
    ck_assert(!ppsim_run_result_any_oom(res));
    ck_assert_double_eq_tol(plan->best->peak_memory, (double)ppsim_run_result_max_peak_memory(res),
                            64.0);
    int full = 0;
    while (plan->problem->mode[full] != PPSIM_RECOMPUTE_FULL)
        full++;
    g_autoptr(PpsimPlanAssignment) even = ppsim_plan_even(plan->problem, full);
    planned = ppsim_plan_scenario(sc, plan->problem, even);
    g_autoptr(PpsimRunResult) base = ppsim_sim_run_spec(planned, spec, 0, &error);
    ppsim_assert_no_error(error);
    ppsim_plan_scenario_free(planned);
    ck_assert(res->makespan_ps <= base->makespan_ps);

    g_autoptr(GString) frag = g_string_new(NULL);
    ppsim_plan_write_fragment(frag, sc, plan);
    g_autofree char *path = g_build_filename(g_get_tmp_dir(), "ppsim-check-plan.yaml", NULL);
    ck_assert(g_file_set_contents(path, frag->str, (gssize)frag->len, NULL));
    g_auto(GStrv) sets = ppsim_scenario_fragment_overrides(path, &error);
    ppsim_assert_no_error(error);
    g_unlink(path);
    g_autofree char *yaml = g_strdup_printf(
        "name: tiny\nmodel: {layers: 12, hidden: 2048, heads: 16, seq_len: 4096, vocab: 32000}\n"
        "training: {pp: 4, microbatches: 8}\nschedule: gpipe\nmemory: {limit: 6GiB}\n");
    /* a fragment must be a mapping of keys to values or lists of values */
    g_autofree char *bad = g_build_filename(g_get_tmp_dir(), "ppsim-check-plan-bad.yaml", NULL);
    ck_assert(g_file_set_contents(bad, "- 1\n- 2\n", -1, NULL));
    g_auto(GStrv) none = ppsim_scenario_fragment_overrides(bad, &error);
    ck_assert_ptr_null(none);
    ppsim_assert_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_PARSE);
    g_clear_error(&error);
    ck_assert(g_file_set_contents(bad, "model: {stage_layers: [[1]]}\n", -1, NULL));
    g_auto(GStrv) nested = ppsim_scenario_fragment_overrides(bad, &error);
    ck_assert_ptr_null(nested);
    ppsim_assert_error(error, PPSIM_SCENARIO_ERROR, PPSIM_SCENARIO_ERROR_PARSE);
    g_clear_error(&error);
    g_unlink(bad);
    g_autoptr(PpsimScenario) again = ppsim_scenario_parse(yaml, strlen(yaml), "again.yaml", ".",
                                                          (const char *const *)sets, &error);
    ppsim_assert_no_error(error);
    ck_assert_str_eq(((PpsimScheduleSpec *)g_ptr_array_index(again->schedules, 0))->name, "1f1b");
    for (int s = 0; s < 4; s++) {
        ck_assert_int_eq(g_array_index(again->model.stage_layers, int, s), plan->best->layers[s]);
        ck_assert_int_eq(g_array_index(again->model.stage_recompute, int, s),
                         plan->problem->mode[plan->best->mode[s]]);
        int k = plan->best->mode[s] == 0 ? -1 : plan->best->mixed[s];
        ck_assert_int_eq(g_array_index(again->model.stage_recompute_layers, int, s), k);
    }
}
END_TEST

/* The planner never returns a plan slower than a candidate it replayed and that fits: on
 * the audit's reproduction, GPT 5.8B with zb-v (the ILP's ZB-V memory bound is looser than
 * the replay; under today's memory model at 41 GiB the ILP's plan replays at 5674 ms where
 * the even split with full recompute fits at 4936 ms; the audit's 33.54 GiB no longer fits
 * any plan) the returned plan is the baseline, and in every case the returned plan, applied
 * through its scenario fragment, replays at the fastest fitting candidate's makespan,
 * without OOM. */
START_TEST(test_plan_never_slower)
{
    const struct {
        const char *scenario, *schedule, *limit, *source;
    } cases[] = {
        {"scenarios/plan/gpt-5.8b-a100.yaml", "zb-v", "memory.limit=41GiB", "even-full"},
        {"scenarios/plan/gpt-5.8b-a100.yaml", "zb-h1", "memory.limit=41GiB", NULL},
        {"scenarios/plan/llama3-8b-a100.yaml", "zb-v", "memory.limit=46GiB", NULL},
    };
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
        g_autofree char *path = ppsim_test_src_path(cases[c].scenario);
        const char *sets[] = {cases[c].limit, NULL};
        g_autoptr(GError) error = NULL;
        g_autoptr(PpsimScenario) sc = ppsim_scenario_load_file(path, sets, &error);
        ppsim_assert_no_error(error);
        PpsimPlanOptions o = {.schedule = cases[c].schedule, .time_limit_s = 30};
        g_autoptr(PpsimPlan) plan = ppsim_plan_new(sc, &o, &error);
        ppsim_assert_no_error(error);
        g_autoptr(GPtrArray) cands = ppsim_plan_choose(plan, sc, &error);
        ppsim_assert_no_error(error);
        ck_assert_uint_ge(cands->len, 3);
        PpsimTime fastest = G_MAXINT64;
        for (guint i = 0; i < cands->len; i++) {
            const PpsimPlanCandidate *k = g_ptr_array_index(cands, i);
            if (k->res != NULL && !ppsim_run_result_any_oom(k->res))
                fastest = MIN(fastest, k->res->makespan_ps);
        }
        if (cases[c].source != NULL)
            ck_assert_str_eq(plan->source, cases[c].source);
        /* the plan as the user gets it: the fragment applied to the scenario, replayed */
        g_autoptr(GString) frag = g_string_new(NULL);
        ppsim_plan_write_fragment(frag, sc, plan);
        g_autofree char *fpath =
            g_build_filename(g_get_tmp_dir(), "ppsim-check-plan-ns.yaml", NULL);
        ck_assert(g_file_set_contents(fpath, frag->str, (gssize)frag->len, NULL));
        g_auto(GStrv) over = ppsim_scenario_fragment_overrides(fpath, &error);
        ppsim_assert_no_error(error);
        g_unlink(fpath);
        g_autoptr(GPtrArray) all = g_ptr_array_new();
        g_ptr_array_add(all, (gpointer)cases[c].limit);
        for (int i = 0; over[i] != NULL; i++)
            g_ptr_array_add(all, over[i]);
        g_ptr_array_add(all, NULL);
        g_autoptr(PpsimScenario) applied =
            ppsim_scenario_load_file(path, (const char *const *)all->pdata, &error);
        ppsim_assert_no_error(error);
        g_autoptr(PpsimRunResult) res =
            ppsim_sim_run_spec(applied, g_ptr_array_index(applied->schedules, 0), 0, &error);
        ppsim_assert_no_error(error);
        ck_assert(!ppsim_run_result_any_oom(res));
        ck_assert_msg(res->makespan_ps == fastest, "case %u: plan (%s) %g ms, fastest %g ms", c,
                      plan->source, res->makespan_ps / 1e9, fastest / 1e9);
    }
}
END_TEST

/* Runs the ppsim executable; returns the exit status, fills *@out and *@err. */
static int
spawn_ppsim(char **out, char **err, const char *const *args)
{
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)g_getenv("PPSIM_EXE"));
    for (int i = 0; args[i]; i++)
        g_ptr_array_add(argv, (gpointer)args[i]);
    g_ptr_array_add(argv, NULL);
    int status = 0;
    g_autoptr(GError) error = NULL;
    g_autofree char *src = ppsim_test_src_path(".");
    ck_assert(g_spawn_sync(src, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, out, err,
                           &status, &error));
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The command: --help teaches, bad flags exit 2, no fit exits 1 naming the limit, text is
 * deterministic, and `ppsim run --with` replays what `ppsim plan -o` wrote. */
START_TEST(test_cli)
{
    const char *scen = "scenarios/plan/llama3-8b-a100.yaml";
    g_autofree char *out = NULL, *err = NULL;
    const char *help[] = {"plan", "--help", NULL};
    ck_assert_int_eq(spawn_ppsim(&out, &err, help), 0);
    ck_assert(strstr(out, "Examples:") && strstr(out, "--compare") && strstr(out, "--with"));
    g_free(out), g_free(err);
    const char *bad[] = {"plan", scen, "--format", "xml", NULL};
    ck_assert_int_eq(spawn_ppsim(&out, &err, bad), 2);
    g_free(out), g_free(err);
    const char *nan_limit[] = {"plan", scen, "--time-limit", "nan", NULL};
    ck_assert_int_eq(spawn_ppsim(&out, &err, nan_limit), 2);
    ck_assert_msg(strstr(err, "--time-limit must be a number of seconds") != NULL, "%s", err);
    g_free(out), g_free(err);
    const char *negative_limit[] = {"plan", scen, "--time-limit", "-1", NULL};
    ck_assert_int_eq(spawn_ppsim(&out, &err, negative_limit), 2);
    g_free(out), g_free(err);
    const char *tight[] = {"plan", scen, "--set", "memory.limit=30GiB", NULL};
    ck_assert_int_eq(spawn_ppsim(&out, &err, tight), 1);
    ck_assert_str_eq(out, "");
    ck_assert_msg(strstr(err, "the smallest limit that fits is") != NULL, "%s", err);
    g_free(out), g_free(err);
    g_autofree char *frag = g_build_filename(g_get_tmp_dir(), "ppsim-check-plan-cli.yaml", NULL);
    const char *planned[] = {"plan", scen, "--compare", "-o", frag, NULL};
    ck_assert_int_eq(spawn_ppsim(&out, &err, planned), 0);
    g_autofree char *again = NULL, *again_err = NULL;
    ck_assert_int_eq(spawn_ppsim(&again, &again_err, planned), 0);
    ck_assert_str_eq(out, again); /* byte-identical: no wall time in the text */
    const char *marker = strstr(out, "\nplan ");
    ck_assert(marker != NULL);
    gsize at = (gsize)(marker - out) + 6;
    g_free(out), g_free(err);
    const char *run[] = {"run", scen, "--with", frag, "--no-artifacts", NULL};
    ck_assert_int_eq(spawn_ppsim(&out, &err, run), 0);
    /* the run's makespan is the plan's replayed one (second number on the plan row) */
    double planned_ms = 0, run_ms = 0;
    ck_assert(sscanf(again + at, "%*f %lf", &planned_ms) == 1);
    const char *row = strstr(out, "\n1f1b ");
    ck_assert(row != NULL && sscanf(row + 6, "%lf", &run_ms) == 1);
    ck_assert_double_eq_tol(run_ms, planned_ms, 1e-3);
    g_unlink(frag);
}
END_TEST

/* A solve stopped at its time limit says how far its plan is from the solver's bound: the
 * DeepSeek-V3 plan of 16 stages in three modes, which takes CBC minutes to prove, given 3 s
 * (text "within x% of the solver's bound", JSON solver.gap). On a machine too loaded for CBC
 * to answer by then, the local search's plan stands and no distance is known: the status
 * alone is checked then. A proved plan says neither. */
START_TEST(test_cli_stopped_gap)
{
    const char *scen = "scenarios/measured/dgxc-dsv3-671b-1024.yaml";
    g_autofree char *out = NULL, *err = NULL;
    const char *text[] = {"plan",        scen,           "--set", "memory.limit=50GB",
                          "--no-replay", "--time-limit", "3",     NULL};
    ck_assert_int_eq(spawn_ppsim(&out, &err, text), 0);
    ck_assert_msg(strstr(out, "ILP on CBC, time_limit") != NULL, "%s", out);
    if (strstr(out, "ILP on CBC, time_limit (its plan within ") != NULL)
        ck_assert_msg(strstr(out, "% of the solver's bound)\n") != NULL, "%s", out);
    g_free(out), g_free(err);
    const char *json[] = {
        "plan",     scen,   "--set", "memory.limit=50GB", "--no-replay", "--time-limit", "3",
        "--format", "json", NULL};
    ck_assert_int_eq(spawn_ppsim(&out, &err, json), 0);
    g_autoptr(JsonParser) parser = json_parser_new();
    ck_assert(json_parser_load_from_data(parser, out, -1, NULL));
    JsonObject *solver =
        json_object_get_object_member(json_node_get_object(json_parser_get_root(parser)), "solver");
    ck_assert_str_eq(json_object_get_string_member(solver, "status"), "time_limit");
    if (json_object_has_member(solver, "gap")) {
        double gap = json_object_get_double_member(solver, "gap");
        ck_assert_msg(gap > 0.0 && gap < 1.0, "gap %g", gap);
    }
    g_free(out), g_free(err);
    const char *proved[] = {"plan", "scenarios/plan/qwen3-moe-h100.yaml", "--no-replay", NULL};
    ck_assert_int_eq(spawn_ppsim(&out, &err, proved), 0);
    ck_assert(strstr(out, "ILP on CBC, optimal\n") != NULL && strstr(out, "bound") == NULL);
}
END_TEST

Suite *
ppsim_test_suite(void)
{
    Suite *s = suite_create("plan");
    TCase *tc = tcase_create("costs");
    tcase_add_test(tc, test_stage_recompute_costs);
    tcase_add_test(tc, test_units_match_cost_model);
    tcase_add_test(tc, test_moe_units_match_cost_model);
    tcase_add_test(tc, test_mla_modes);
    tcase_add_test(tc, test_even_split_exact);
    suite_add_tcase(s, tc);
    tc = tcase_create("bubbles");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_bubbles_sum_exactly);
    suite_add_tcase(s, tc);
    tc = tcase_create("planner");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_hand_instance);
    ppsim_test_add_cbc(tc, test_ilp_matches_brute_force);
    ppsim_test_add_cbc(tc, test_moe_ilp_matches_brute_force);
    ppsim_test_add_cbc(tc, test_zbv_not_paced);
    tcase_add_test(tc, test_vshape_tied_tail);
    ppsim_test_add_cbc(tc, test_untied_chunks_balanced);
    tcase_add_test(tc, test_no_fit_names_smallest_limit);
    ppsim_test_add_cbc(tc, test_ilp_cut_off_keeps_start);
    tcase_add_test(tc, test_plan_replay_and_fragment);
    tcase_add_test(tc, test_plan_never_slower);
    suite_add_tcase(s, tc);
    tc = tcase_create("cli");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_cli);
    ppsim_test_add_cbc(tc, test_cli_stopped_gap);
    suite_add_tcase(s, tc);
    return s;
}
