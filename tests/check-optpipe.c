/* check-optpipe.c: the OptPipe family ([OP]): the estimate the generators decide on agrees
 * with the replay in explicit mode; AdaOffload never slower than PipeOffload at the same
 * memory limit and always within it; infeasible limits named. */
#include "ppsim-test.h"
#include "milp/milp.h"
#include "sched/optpipe/adaoffload.h"
#include "sched/optpipe/op-eval.h"
#include "schedule/schedule.h"
#include "sim/sim.h"
#include "util/ppsim-error.h"

#include <glib/gstdio.h>
#include <string.h>

/* Explicit scenario: unit-ish costs scaled by @fbw ("F:B:W"), offload @off ms, p2p @comm ms,
 * memory.limit @limit units (0: none). */
static PpsimScenario *
op_scenario(int p, int m, double f, double b, double w, double off, double comm, double limit)
{
    PpsimScenario *sc = ppsim_scenario_new_explicit(p, 1, m, "1f1b");
    sc->costs.forward_ps = (PpsimTime)(f * PPSIM_PS_PER_MS);
    sc->costs.backward_input_ps = (PpsimTime)(b * PPSIM_PS_PER_MS);
    sc->costs.backward_weight_ps = (PpsimTime)(w * PPSIM_PS_PER_MS);
    sc->costs.offload_ps = (PpsimTime)(off * PPSIM_PS_PER_MS);
    sc->costs.p2p_ps = (PpsimTime)(comm * PPSIM_PS_PER_MS);
    sc->memory_limit_units = limit;
    sc->memory_limit_set = limit > 0;
    return sc;
}

static PpsimRunResult *
op_run(const PpsimScenario *sc, const char *name, GError **error)
{
    return ppsim_test_run_option(sc, name, NULL, NULL, error);
}

/* Cost mixes F, B, W, offload, p2p (ms): uneven with latency; unit (many ties); k > 1. */
static const double op_mix[][5] = {
    {1, 1.5, 0.7, 0.6, 0.1},
    {1, 1, 1, 0.5, 0},
    {1, 2, 1, 1.5, 0},
};

/* The estimate (timeline + memory rules, frees before allocations at equal times) of each
 * generator's schedule against its replay, exactly, in explicit mode. */
START_TEST(test_eval_matches_replay)
{
    const char *names[] = {"1f1b", "zb-h1", "pipeoffload", "po-f", "adaoffload"};
    const double *x = op_mix[_i];
    for (int p = 2; p <= 4; p++)
        for (int m = 1; m <= 2 * p + 1; m += 2)
            for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
                g_autoptr(GError) error = NULL;
                g_autoptr(PpsimScenario) sc = op_scenario(p, m, x[0], x[1], x[2], x[3], x[4], 0);
                g_autoptr(PpsimScheduleSpec) spec = ppsim_schedule_spec_new(names[i]);
                PpsimCosts *costs = NULL;
                PpsimSchedule *sched = ppsim_sim_build_schedule(sc, spec, &costs, &error);
                ppsim_assert_no_error(error);
                gint64 peak[8];
                PpsimOpEval ev;
                ck_assert(ppsim_op_eval(sched, &costs->estimates, NULL, peak, &ev, &error));
                g_autoptr(PpsimRunResult) res =
                    ppsim_sim_replay(sc, costs, sched, names[i], names[i], 0, &error);
                ppsim_assert_no_error(error);
                ck_assert_int_eq(ev.makespan_ps, res->makespan_ps);
                for (int d = 0; d < p; d++)
                    ck_assert_msg(peak[d] == res->devices[d].peak_activation,
                                  "%s p=%d m=%d dev %d: estimate %ld, replay %ld", names[i], p, m,
                                  d, (long)peak[d], (long)res->devices[d].peak_activation);
                ppsim_costs_free(costs);
            }
}
END_TEST

/* AdaOffload on a grid (p in {2, 4, 8}, m in {p, 2p, 4p}, the cost mixes, memory.limit in
 * {1.5, 2, 3, p/2 + 1, none}): its replay stays within the limit on every device, and it
 * is never slower than PipeOffload (PO-H = PO-F at v = 1) whenever PipeOffload's replay fits
 * the same limit; where the limit is infeasible the error names it and a feasible limit, and
 * AdaOffload then fits that one. */
START_TEST(test_ada_grid)
{
    const double *x = op_mix[_i];
    int n_cmp = 0, n_faster = 0;
    for (int p = 2; p <= 8; p *= 2)
        for (int m = p; m <= 4 * p; m *= 2) {
            double limits[] = {1.5, 2, 3, p / 2 + 1, 0};
            for (guint l = 0; l < G_N_ELEMENTS(limits); l++) {
                g_autoptr(GError) error = NULL;
                g_autoptr(PpsimScenario) sc =
                    op_scenario(p, m, x[0], x[1], x[2], x[3], x[4], limits[l]);
                g_autoptr(PpsimRunResult) po = op_run(sc, "pipeoffload", &error);
                ppsim_assert_no_error(error);
                g_autoptr(PpsimRunResult) ada = op_run(sc, "adaoffload", &error);
                if (ada == NULL) {
                    ppsim_assert_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED);
                    ck_assert_msg(strstr(error->message, "is infeasible") &&
                                      strstr(error->message, "smallest feasible limit"),
                                  "%s", error->message);
                    ck_assert(ppsim_run_result_any_oom(po));
                    continue;
                }
                ck_assert_msg(!ppsim_run_result_any_oom(ada), "p=%d m=%d limit %g", p, m,
                              limits[l]);
                if (!ppsim_run_result_any_oom(po)) {
                    n_cmp++;
                    ck_assert_int_le(ada->makespan_ps, po->makespan_ps);
                    n_faster += ada->makespan_ps < po->makespan_ps;
                }
            }
        }
    ck_assert_int_gt(n_cmp, 20);
    ck_assert_int_gt(n_faster, 0); /* the denser fill does buy time somewhere */
}
END_TEST

/* A limit below one microbatch is infeasible whatever is offloaded (F allocates it): refused
 * naming the limit and the smallest feasible one, with which the schedule fits (a fill of
 * one forward per device: serial, but within the limit); the same for optpipe. */
START_TEST(test_ada_infeasible)
{
    const char *names[] = {"adaoffload", "optpipe"};
    for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
        g_autoptr(GError) error = NULL;
        g_autoptr(PpsimScenario) sc = op_scenario(i == 0 ? 4 : 2, 4, 1, 1, 1, 0.5, 0, 0.5);
        g_autoptr(PpsimRunResult) none = op_run(sc, names[i], &error);
        ck_assert(none == NULL);
        ppsim_assert_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED);
        ck_assert_msg(strstr(error->message, "memory.limit 0.5 units is infeasible") &&
                          strstr(error->message, "smallest feasible memory.limit is 1 units"),
                      "%s", error->message);
        g_clear_error(&error);
        sc->memory_limit_units = 1;
        g_autoptr(PpsimRunResult) res = op_run(sc, names[i], &error);
        ppsim_assert_no_error(error);
        ck_assert(!ppsim_run_result_any_oom(res));
        ck_assert_int_eq(ppsim_run_result_max_peak_activation(res), 1000);
    }
}
END_TEST

/* Runs optpipe with cache_dir = @dir; its solver report in *@rep. */
static PpsimRunResult *
op_run_cached(const PpsimScenario *sc, const char *dir, PpsimSolverReport *rep)
{
    g_autoptr(PpsimScheduleSpec) spec = ppsim_schedule_spec_new("optpipe");
    PpsimOptionValue o = {g_strdup("cache_dir"), g_strdup(dir), {1, 1}};
    g_array_append_val(spec->options, o);
    PpsimOptionValue t = {g_strdup("gap"), g_strdup("0.1"), {1, 1}};
    g_array_append_val(spec->options, t); /* stop at 15 ms (AdaOffload: 16; bound 14) */
    /* the node limit and the gap end the search, not the clock: a loaded machine or a
     * sanitizer build must not change the path taken */
    PpsimOptionValue l = {g_strdup("time_limit"), g_strdup("120"), {1, 1}};
    g_array_append_val(spec->options, l);
    g_autoptr(GError) error = NULL;
    PpsimCosts *costs = NULL;
    *rep = (PpsimSolverReport){0};
    PpsimSchedule *s = ppsim_sim_build_schedule_full(sc, spec, &costs, rep, &error);
    ppsim_assert_no_error(error);
    PpsimRunResult *res = ppsim_sim_replay(sc, costs, s, "optpipe", "optpipe", 0, &error);
    ppsim_assert_no_error(error);
    ppsim_costs_free(costs);
    return res;
}

/* AdaOffload skips timing a fill without offload that cannot fit, taking its peaks from the
 * list order: on random fills, lags and stage costs (forwards of positive duration, the
 * other ops of any, zero included) those peaks equal the estimate's, which sorts the
 * timed memory changes. */
START_TEST(test_ada_fill_peaks)
{
    g_autoptr(GRand) rng = g_rand_new_with_seed(29);
    for (int rep = 0; rep < 300; rep++) {
        int p = g_rand_int_range(rng, 1, 7), m = g_rand_int_range(rng, 1, 3 * p + 3);
        g_autoptr(GError) error = NULL;
        g_autoptr(PpsimScenario) sc = op_scenario(p, m, 1, 1, 1, 1, 0.1, 0);
        g_autoptr(PpsimScheduleSpec) spec = ppsim_schedule_spec_new("1f1b");
        PpsimCosts *costs = NULL;
        g_autoptr(PpsimSchedule) unused = ppsim_sim_build_schedule(sc, spec, &costs, &error);
        ppsim_assert_no_error(error);
        PpsimStageEstimate stages[8];
        memcpy(stages, costs->estimates.stage, p * sizeof *stages);
        PpsimCostEstimates est = costs->estimates, *c = &est;
        est.stage = stages;
        est.comm_ps = g_rand_int_range(rng, 0, 3);
        for (int d = 0; d < p; d++) {
            PpsimStageEstimate *st = &stages[d];
            st->f_ps = g_rand_int_range(rng, 1, 5);
            st->b_ps = g_rand_int_range(rng, 0, 5);
            st->w_ps = g_rand_int_range(rng, 0, 5);
            st->act = g_rand_int_range(rng, 1, 9);
            st->act_w = g_rand_int_range(rng, 0, (gint32)st->act + 1);
        }
        int w[8];
        for (int d = 0; d < p; d++) {
            w[d] = g_rand_int_range(rng, 1, m + 1);
            if (d > 0)
                w[d] = MIN(w[d], w[d - 1]);
        }
        int lag = g_rand_int_range(rng, 0, 4);
        PpsimPipelineShape shape = {.p = p, .v = 1, .m = m};
        g_autoptr(PpsimSchedule) s = ppsim_adaoffload_fill(&shape, w, lag);
        gint64 want[8], got[8];
        PpsimOpEval ev;
        ck_assert(ppsim_op_eval(s, c, NULL, want, &ev, &error));
        ck_assert(ppsim_adaoffload_fill_peaks(&shape, c, w, lag, got));
        for (int d = 0; d < p; d++)
            ck_assert_msg(got[d] == want[d],
                          "rep %d p=%d m=%d lag %d device %d: %" G_GINT64_FORMAT
                          " vs %" G_GINT64_FORMAT,
                          rep, p, m, lag, d, got[d], want[d]);
        stages[g_rand_int_range(rng, 0, p)].f_ps = 0; /* then the timeline decides */
        ck_assert(!ppsim_adaoffload_fill_peaks(&shape, c, w, lag, got));
        ppsim_costs_free(costs);
    }
}
END_TEST

/* The budget option of AdaOffload (and of optpipe's warm starts): the default keeps the full
 * search's schedule on instances with p m <= 4096, with and without a limit, in explicit
 * and hardware mode; unlimited and 0 are the full search; bad values are refused. A small
 * budget still gives a schedule within the limit, no faster than the full search's and
 * never slower than PipeOffload's (its own is always measured; explicit mode, where the
 * estimate is the replay), and says where it was cut and how far from a lower bound. */
START_TEST(test_ada_budget)
{
    const double *x = op_mix[1];
    for (int lim = 0; lim < 2; lim++) {
        g_autoptr(PpsimScenario) sc = op_scenario(8, 24, x[0], x[1], x[2], x[3], x[4], lim ? 3 : 0);
        g_autoptr(PpsimRunResult) full =
            ppsim_test_budget_default_is_full(sc, "adaoffload", NULL, NULL);
        g_autoptr(PpsimRunResult) op_full =
            ppsim_test_budget_default_is_full(sc, "optpipe", "max_binaries", "0");
        g_autoptr(GError) error = NULL;
        g_autoptr(PpsimRunResult) po = op_run(sc, "pipeoffload", &error);
        ppsim_assert_no_error(error);
        const char *small[] = {"1", "2000"};
        for (guint b = 0; b < G_N_ELEMENTS(small); b++) {
            g_autoptr(PpsimRunResult) cut =
                ppsim_test_run_option(sc, "adaoffload", "budget", small[b], &error);
            ppsim_assert_no_error(error);
            ck_assert(!ppsim_run_result_any_oom(cut));
            ck_assert_int_ge(cut->makespan_ps, full->makespan_ps);
            if (!ppsim_run_result_any_oom(po))
                ck_assert_int_le(cut->makespan_ps, po->makespan_ps);
            const char *note = ppsim_test_choice_note(cut, "budget");
            ck_assert_msg(note != NULL, "budget %s: no budget choice", small[b]);
            int n_run = 0, n_total = 0;
            const char *at = strstr(note, "cut after ");
            ck_assert_msg(at && sscanf(at, "cut after %d of %d", &n_run, &n_total) == 2, "%s",
                          note);
            ck_assert_msg(n_run >= 1 && n_run < n_total, "%s", note);
            ck_assert_int_eq(n_total, 2 * 4 * (8 + 2));
            ck_assert_msg(strstr(note, "of a lower bound") != NULL, "%s", note);
        }
    }
    g_autoptr(PpsimScenario) hw = ppsim_test_load_scenario("scenarios/optpipe_h100.yaml", NULL);
    g_autoptr(PpsimRunResult) rh = ppsim_test_budget_default_is_full(hw, "adaoffload", NULL, NULL);
}
END_TEST

/* [OP] §4.2: a solved schedule is stored (CSV + JSON under the cache directory) and comes
 * back as the warm start of the same instance, and of one whose costs are all twice as long
 * (the key is proportional); a corrupt entry and an entry of another shape are ignored with
 * a warning, and the result is still the solver's. */
START_TEST(test_cache)
{
    g_autofree char *dir = g_dir_make_tmp("ppsim-cache-XXXXXX", NULL);
    g_autoptr(PpsimScenario) sc = op_scenario(3, 4, 1, 1, 1, 0.5, 0, 2);
    PpsimSolverReport rep;
    g_autoptr(PpsimRunResult) first = op_run_cached(sc, dir, &rep);
    ck_assert_str_eq(rep.path, "milp");
    ck_assert_str_eq(rep.note, "");
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    g_autofree char *csv = NULL, *json = NULL;
    for (const char *name; (name = g_dir_read_name(d)) != NULL;) {
        if (g_str_has_suffix(name, ".csv"))
            csv = g_build_filename(dir, name, NULL);
        if (g_str_has_suffix(name, ".json"))
            json = g_build_filename(dir, name, NULL);
    }
    ck_assert(csv != NULL && json != NULL);
    g_autoptr(PpsimRunResult) again = op_run_cached(sc, dir, &rep);
    ck_assert_str_eq(rep.note, "warm start from the cache");
    ck_assert_int_eq(again->makespan_ps, first->makespan_ps);
    g_autoptr(PpsimScenario) slow = op_scenario(3, 4, 2, 2, 2, 1, 0, 2);
    g_autoptr(PpsimRunResult) twice = op_run_cached(slow, dir, &rep);
    ck_assert_str_eq(rep.note, "warm start from the cache");
    ck_assert_int_eq(twice->makespan_ps, 2 * first->makespan_ps);
    ck_assert(g_file_set_contents(json, "{\"version\":1,\"key\":", -1, NULL));
    g_autoptr(PpsimRunResult) corrupt = op_run_cached(sc, dir, &rep);
    ck_assert_msg(strstr(rep.warning, "ignored"), "%s", rep.warning);
    ck_assert_int_le(corrupt->makespan_ps, first->makespan_ps);
    g_autoptr(PpsimRunResult) o1 = op_run_cached(sc, dir, &rep); /* rewrites it */
    ck_assert(g_file_set_contents(csv, "0F0,0I0,0W0\n1F0,1I0,1W0\n", -1, NULL));
    g_autoptr(PpsimRunResult) stale = op_run_cached(sc, dir, &rep);
    ck_assert_msg(strstr(rep.warning, "ignored") && strstr(rep.warning, "checksum"), "%s",
                  rep.warning);
    ck_assert(!ppsim_run_result_any_oom(stale));
    (void)o1;
    g_autoptr(GDir) d2 = g_dir_open(dir, 0, NULL);
    for (const char *name; (name = g_dir_read_name(d2)) != NULL;) {
        g_autofree char *path = g_build_filename(dir, name, NULL);
        g_remove(path);
    }
    g_rmdir(dir);
}
END_TEST

/* The heuristic path (more binaries than max_binaries) still reports a bound and a gap:
 * the machine bound max_i [sum_{k<i} (F_k + comm) + m (F_i + B_i + W_i)]. p = 4, m = 8,
 * F = B = W = 1 ms: 3 + 24 = 27 ms, which the warm start (the automatic ZB) meets without a
 * limit (gap 0, so it is optimal); under a 2-unit limit the bound stays 27 ms and is below
 * the warm start's makespan, which the gap reports. With stage-span the bound is a device's
 * work, 24 ms. */
START_TEST(test_heuristic_bound)
{
    const struct {
        double limit;
        const char *objective;
        double bound;
    } cases[] = {{0, "makespan", 27}, {2, "makespan", 27}, {0, "stage-span", 24}};
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
        g_autoptr(PpsimScenario) sc = ppsim_scenario_new_explicit(4, 1, 8, "optpipe");
        sc->costs.offload_ps = PPSIM_PS_PER_MS / 2;
        sc->memory_limit_units = cases[c].limit;
        sc->memory_limit_set = cases[c].limit > 0;
        g_autoptr(PpsimScheduleSpec) spec = ppsim_schedule_spec_new("optpipe");
        const char *kv[] = {"max_binaries", "1",         "cache_dir",
                            "none",         "objective", cases[c].objective};
        for (guint k = 0; k < G_N_ELEMENTS(kv); k += 2) {
            PpsimOptionValue o = {g_strdup(kv[k]), g_strdup(kv[k + 1]), {1, 1}};
            g_array_append_val(spec->options, o);
        }
        g_autoptr(GError) error = NULL;
        PpsimCosts *costs = NULL;
        PpsimSolverReport rep = {0};
        PpsimSchedule *s = ppsim_sim_build_schedule_full(sc, spec, &costs, &rep, &error);
        ppsim_assert_no_error(error);
        g_autoptr(PpsimRunResult) res =
            ppsim_sim_replay(sc, costs, s, "optpipe", "optpipe", 0, &error);
        ppsim_assert_no_error(error);
        ppsim_costs_free(costs);
        ck_assert_str_eq(rep.path, "heuristic");
        ck_assert_msg(fabs(rep.bound_ms - cases[c].bound) < 1e-9, "case %u: bound %g", c,
                      rep.bound_ms);
        ck_assert(rep.bound_ms <= rep.objective_ms + 1e-9);
        ck_assert(fabs(rep.gap - (rep.objective_ms - rep.bound_ms) / rep.objective_ms) < 1e-12);
        if (c == 0) /* memory-rich: the warm start meets the bound */
            ck_assert(rep.gap == 0 && fabs(res->makespan_ps / 1e9 - 27) < 1e-9);
        if (c == 1)
            ck_assert(rep.gap > 0);
    }
}
END_TEST

Suite *
ppsim_test_suite(void)
{
    Suite *s = suite_create("optpipe");
    TCase *tc = tcase_create("optpipe");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_eval_matches_replay, 0, G_N_ELEMENTS(op_mix));
    suite_add_tcase(s, tc);
    TCase *ada = tcase_create("adaoffload");
    tcase_set_timeout(ada, 120);
    tcase_add_loop_test(ada, test_ada_grid, 0, G_N_ELEMENTS(op_mix));
    tcase_add_test(ada, test_ada_infeasible);
    tcase_add_test(ada, test_ada_budget);
    tcase_add_test(ada, test_ada_fill_peaks);
    suite_add_tcase(s, ada);
    TCase *cache = tcase_create("cache");
    tcase_set_timeout(cache, 120);
    ppsim_test_add_cbc(cache, test_cache);
    tcase_add_test(cache, test_heuristic_bound);
    suite_add_tcase(s, cache);
    return s;
}
