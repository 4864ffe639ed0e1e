/* check-dualpipe.c: DualPipe and DualPipeV ([DUALPIPE], [DSV3] §3.2.1) through the checker and
 * the replay: the README table's rows (bubble (PP/2-1)(F&B + B - 3W) with B a full backward,
 * PP+1 activations, 2x parameters for DualPipe) on PP 4..32 where exact, the bound where not,
 * the F&B pair's cost and placement, two pipelines' dependencies, CSV round trips, refusals,
 * and the checker's rules for pairs and pipelines. */
#include "ppsim-test.h"
#include "formulas/formulas.h"
#include "schedule/schedule.h"
#include "sim/sim.h"
#include "util/ppsim-error.h"

#include <glib/gstdio.h>
#include <string.h>

#define MS PPSIM_PS_PER_MS

static PpsimScenario *
dp_scenario(const char *name, int p, int m, double f, double b, double w, double fb)
{
    PpsimScenario *sc = ppsim_scenario_new_explicit(p, 2, m, name);
    sc->costs.forward_ps = (PpsimTime)(f * MS);
    sc->costs.backward_input_ps = (PpsimTime)(b * MS);
    sc->costs.backward_weight_ps = (PpsimTime)(w * MS);
    sc->costs.forward_backward_ps = (PpsimTime)(fb * MS);
    return sc;
}

static PpsimRunResult *
dp_run(const PpsimScenario *sc, const char *name)
{
    g_autoptr(GError) error = NULL;
    PpsimRunResult *res = ppsim_test_run_option(sc, name, NULL, NULL, &error);
    ppsim_assert_no_error(error);
    return res;
}

/* The largest idle time of a device: makespan - busy (its idle prefix included). */
static PpsimTime
dp_max_idle(const PpsimRunResult *res)
{
    PpsimTime worst = 0;
    for (int d = 0; d < res->p; d++)
        worst = MAX(worst, res->makespan_ps - res->devices[d].busy_ps);
    return worst;
}

/* [DUALPIPE] README: (PP/2 - 1)(F&B + B_full - 3W), B_full = B + W; PP = p (DualPipe) or 2p
 * (DualPipeV). */
static PpsimTime
dp_readme_bubble(const char *name, int p, double f, double b, double w, double fb)
{
    (void)f;
    int pp = strcmp(name, "dualpipe") == 0 ? p : 2 * p;
    return (PpsimTime)((pp / 2 - 1) * (fb + b + w - 3 * w) * MS + 0.5);
}

/* Exact where F = B >= W and F&B >= F + B (p2p 0): the README's bubble is the idle time of
 * the devices with the most F&B pairs, and every device peaks at PP+1 activations, for
 * PP = 4..32 and m from 2p up. */
START_TEST(test_readme_rows_exact)
{
    static const double costs[][4] = {{1, 1, 1, 2.5}, {1, 1, 1, 2}, {2, 2, 1, 5}, {1, 1, 0.2, 2.1}};
    for (int k = 0; k < 2; k++) {
        const char *name = k == 0 ? "dualpipe" : "dualpipev";
        for (int pp = 4; pp <= 32; pp += 2) {
            int p = k == 0 ? pp : pp / 2;
            int ms[] = {2 * p, 2 * p + 2, 3 * p + (3 * p) % 2};
            for (guint mi = 0; mi < G_N_ELEMENTS(ms); mi++)
                for (guint c = 0; c < G_N_ELEMENTS(costs); c++) {
                    const double *x = costs[c];
                    g_autoptr(PpsimScenario) sc =
                        dp_scenario(name, p, ms[mi], x[0], x[1], x[2], x[3]);
                    g_autoptr(PpsimRunResult) res = dp_run(sc, name);
                    ck_assert_msg(dp_max_idle(res) ==
                                      dp_readme_bubble(name, p, x[0], x[1], x[2], x[3]),
                                  "%s p=%d m=%d cost set %u: idle %" G_GINT64_FORMAT, name, p,
                                  ms[mi], c, dp_max_idle(res));
                    for (int d = 0; d < p; d++)
                        ck_assert_int_eq(res->devices[d].peak_activation,
                                         (gint64)(pp + 1) * PPSIM_EXPLICIT_MEM_SCALE);
                }
        }
    }
}
END_TEST

/* Where B >= F >= W and F&B >= F + B, the README's bubble bounds the idle time from above;
 * with F > B or F&B < F + B it does not (one case each, so the conditions stay honest). */
START_TEST(test_readme_bound)
{
    static const double bound[][4] = {
        {1, 2, 1, 3.5}, {1, 1.5, 1, 3}, {1, 3, 1, 4}, {1, 1.2, 0.3, 2.5}};
    for (int k = 0; k < 2; k++) {
        const char *name = k == 0 ? "dualpipe" : "dualpipev";
        for (int pp = 4; pp <= 32; pp += 4) {
            int p = k == 0 ? pp : pp / 2;
            for (guint c = 0; c < G_N_ELEMENTS(bound); c++) {
                const double *x = bound[c];
                g_autoptr(PpsimScenario) sc =
                    dp_scenario(name, p, 3 * p + (3 * p) % 2, x[0], x[1], x[2], x[3]);
                g_autoptr(PpsimRunResult) res = dp_run(sc, name);
                ck_assert(dp_max_idle(res) <= dp_readme_bubble(name, p, x[0], x[1], x[2], x[3]));
            }
        }
        int p = k == 0 ? 8 : 4;
        g_autoptr(PpsimScenario) f_big = dp_scenario(name, p, 2 * p, 1.5, 1, 1, 3);
        g_autoptr(PpsimRunResult) r1 = dp_run(f_big, name);
        ck_assert(dp_max_idle(r1) > dp_readme_bubble(name, p, 1.5, 1, 1, 3));
        g_autoptr(PpsimScenario) fb_small = dp_scenario(name, p, 2 * p, 1, 1, 1, 1.5);
        g_autoptr(PpsimRunResult) r2 = dp_run(fb_small, name);
        ck_assert(dp_max_idle(r2) > dp_readme_bubble(name, p, 1, 1, 1, 1.5));
    }
}
END_TEST

/* The pair lasts F&B: each pair's halves sit back to back, and the two halves' durations sum
 * to forward_backward; without it (F + B + W) the pairs cost what the ops cost alone. */
START_TEST(test_pair_cost_and_shape)
{
    g_autoptr(PpsimScenario) sc = dp_scenario("dualpipev", 4, 12, 1, 1.5, 0.5, 2.25);
    g_autoptr(PpsimRunResult) res = dp_run(sc, "dualpipev");
    int pairs = 0;
    for (int d = 0; d < res->p; d++) {
        const GArray *ops = res->schedule->compute[d];
        for (guint i = 0; i + 1 < ops->len; i++) {
            const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
            if (!(op->flags & PPSIM_OP_FLAG_OVERLAP))
                continue;
            const PpsimOpTiming *a = &g_array_index(res->compute_timing[d], PpsimOpTiming, i);
            const PpsimOpTiming *b = &g_array_index(res->compute_timing[d], PpsimOpTiming, i + 1);
            ck_assert_int_eq(g_array_index(ops, PpsimOp, i + 1).kind, PPSIM_OP_BW);
            ck_assert_int_eq(a->end_ps, b->start_ps);
            ck_assert_int_eq(b->end_ps - a->start_ps, 9 * MS / 4);
            /* split in proportion to F and B + W: 2.25 x 1/3 */
            ck_assert_int_eq(a->end_ps - a->start_ps, 3 * MS / 4);
            pairs++;
            i++;
        }
    }
    /* per device 2n - 3P + h + 1 pairs, less one on the middle device (dualpipe.h) */
    ck_assert_int_eq(pairs, (24 - 12 + 1) + (24 - 12 + 2) + (24 - 12 + 3) + (24 - 12 + 4 - 1));

    g_autoptr(PpsimScenario) plain = dp_scenario("dualpipev", 4, 12, 1, 1.5, 0.5, 0);
    g_autoptr(PpsimRunResult) r2 = dp_run(plain, "dualpipev");
    for (int d = 0; d < r2->p; d++)
        ck_assert_int_eq(r2->devices[d].busy_ps, 2 * 12 * 3 * MS);
}
END_TEST

/* DualPipe: microbatches 0..m/2-1 run through stages 0..p-1, the others through p..2p-1, and
 * no dependency crosses: both ends start at 0, the reverse direction at device p-1. */
START_TEST(test_two_pipelines)
{
    g_autoptr(PpsimScenario) sc = dp_scenario("dualpipe", 4, 8, 1, 1, 1, 2.5);
    g_autoptr(PpsimRunResult) res = dp_run(sc, "dualpipe");
    ck_assert_int_eq(res->schedule->pipe_stages, 4);
    for (int d = 0; d < res->p; d++) {
        const GArray *ops = res->schedule->compute[d];
        for (guint i = 0; i < ops->len; i++) {
            const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
            ck_assert_int_eq(op->stage < 4, op->microbatch < 4);
        }
    }
    ck_assert_int_eq(res->devices[0].first_start_ps, 0);
    ck_assert_int_eq(res->devices[3].first_start_ps, 0);
    const PpsimOp *first = &g_array_index(res->schedule->compute[3], PpsimOp, 0);
    ck_assert_int_eq(first->stage, 4);
    ck_assert_int_eq(first->microbatch, 4);
}
END_TEST

/* 2x parameters: a DualPipe device holds the layers of stages d and p-1-d of the model's
 * p-stage split, so its static memory is what 1F1B puts on devices d and p-1-d together;
 * the model's FLOPs are counted once. */
START_TEST(test_dualpipe_parameters)
{
    const char *set[] = {"training.pp=4", "training.microbatches=8", NULL};
    g_autoptr(PpsimScenario) sc = ppsim_test_load_scenario("scenarios/a100_8gpu.yaml", set);
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimRunResult) one = ppsim_test_run_option(sc, "1f1b", NULL, NULL, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimRunResult) dual = ppsim_test_run_option(sc, "dualpipe", NULL, NULL, &error);
    ppsim_assert_no_error(error);
    /* the model states (weights, gradients, optimizer): the fixed part of static memory
     * (memory.reserved, NCCL's buffers) is per GPU, not per stage */
#define STATES(r, d)                                                                               \
    ((r)->devices[d].mem_weights + (r)->devices[d].mem_gradients + (r)->devices[d].mem_optimizer)
    for (int d = 0; d < 4; d++) {
        ck_assert(dual->devices[d].has_breakdown && one->devices[d].has_breakdown);
        gint64 want = STATES(one, d) + STATES(one, 3 - d);
        ck_assert_msg(llabs(STATES(dual, d) - want) <= 3,
                      "device %d: %" G_GINT64_FORMAT " vs %" G_GINT64_FORMAT, d, STATES(dual, d),
                      want);
    }
#undef STATES
    /* the model's FLOPs (MFU's numerator) once: a microbatch runs through one direction */
    ck_assert(one->model_flops > 0);
    ck_assert_double_eq_tol(dual->model_flops, one->model_flops, one->model_flops * 1e-12);
    g_autoptr(PpsimRunResult) v = ppsim_test_run_option(sc, "dualpipev", NULL, NULL, &error);
    ppsim_assert_no_error(error);
    gint64 sum_one = 0, sum_v = 0;
    for (int d = 0; d < 4; d++) {
        sum_one += one->devices[d].static_memory;
        sum_v += v->devices[d].static_memory;
    }
    ck_assert_int_eq(sum_v, sum_one); /* one copy, spread over 2p chunks */

    /* the exported CSV replays to the same makespan and memory in hardware mode: the file's
     * two pipelines give the reverse stages the forward stages' costs again */
    g_autoptr(GString) csv = ppsim_schedule_to_csv(dual->schedule);
    g_autofree char *dir = g_dir_make_tmp("ppsim-dualpipe-XXXXXX", &error);
    ppsim_assert_no_error(error);
    g_autofree char *file = g_build_filename(dir, "d.csv", NULL);
    ck_assert(g_file_set_contents(file, csv->str, (gssize)csv->len, &error));
    g_autofree char *custom = g_strdup_printf("schedule={name: custom, file: %s}", file);
    const char *set2[] = {"training.pp=4", "training.microbatches=8", custom, NULL};
    g_autoptr(PpsimScenario) sc2 = ppsim_test_load_scenario("scenarios/a100_8gpu.yaml", set2);
    g_autoptr(PpsimRunResult) back =
        ppsim_sim_run_spec(sc2, g_ptr_array_index(sc2->schedules, 0), 0, &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(back->makespan_ps, dual->makespan_ps);
    for (int d = 0; d < 4; d++)
        ck_assert_int_eq(back->devices[d].peak_memory, dual->devices[d].peak_memory);
    g_unlink(file);
    g_rmdir(dir);
}
END_TEST

/* What the generators refuse, naming the requirement. */
START_TEST(test_refusals)
{
    static const struct {
        const char *name;
        int p, m;
        const char *needle;
    } bad[] = {{"dualpipe", 3, 12, "even number of devices"},
               {"dualpipe", 4, 7, "even number of microbatches m >= 2p = 8"},
               {"dualpipe", 4, 6, "m >= 2p = 8"},
               {"dualpipev", 4, 7, "m >= 2p = 8"}};
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autoptr(PpsimScenario) sc = dp_scenario(bad[i].name, bad[i].p, bad[i].m, 1, 1, 1, 2);
        g_autoptr(GError) error = NULL;
        g_autoptr(PpsimRunResult) res = ppsim_test_run_option(sc, bad[i].name, NULL, NULL, &error);
        ck_assert(res == NULL);
        ppsim_assert_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED);
        ck_assert_msg(strstr(error->message, bad[i].needle) != NULL, "%s", error->message);
    }
    g_autoptr(PpsimScenario) ok = dp_scenario("dualpipev", 3, 6, 1, 1, 1, 2); /* odd p is fine */
    g_autoptr(PpsimRunResult) res = dp_run(ok, "dualpipev");
    ck_assert(res->makespan_ps > 0);
}
END_TEST

/* Interleaved 1F1B with option pairs ([MEG] --overlap-moe-expert-parallel-comm): every
 * steady-state F and the BW after it form one F&B pair (p = 4, v = 2, m = 8: rank r has
 * m v - warm-up = 16 - min(2(p - r - 1) + (v - 1) p, 16) pairs), warm-up and cool-down ops
 * none; the pair lasts costs.forward_backward, so a pair cheaper than F + B + W shortens the
 * step, one as long changes nothing; pairs with a recompute option, or a value other than
 * true or false, are refused. */
START_TEST(test_interleaved_pairs)
{
    g_autoptr(PpsimScenario) sc = dp_scenario("interleaved", 4, 8, 1, 1.5, 0.5, 2.25);
    g_autoptr(PpsimRunResult) res = ppsim_test_run_option(sc, "interleaved", "pairs", "true", NULL);
    ck_assert_ptr_nonnull(res);
    for (int d = 0; d < res->p; d++) {
        const GArray *ops = res->schedule->compute[d];
        int warm = MIN(2 * (4 - d - 1) + 4, 16), pairs = 0;
        for (guint i = 0; i < ops->len; i++) {
            const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
            gboolean steady = (int)i >= warm && (int)i < warm + 2 * (16 - warm);
            ck_assert_int_eq((op->flags & PPSIM_OP_FLAG_OVERLAP) != 0, steady);
            if (steady && op->kind == PPSIM_OP_F) {
                const PpsimOpTiming *a = &g_array_index(res->compute_timing[d], PpsimOpTiming, i);
                const PpsimOpTiming *b =
                    &g_array_index(res->compute_timing[d], PpsimOpTiming, i + 1);
                ck_assert_int_eq(b->end_ps - a->start_ps, 9 * MS / 4);
                pairs++;
            }
        }
        ck_assert_int_eq(pairs, 16 - warm);
    }
    g_autoptr(PpsimRunResult) plain = ppsim_test_run_option(sc, "interleaved", NULL, NULL, NULL);
    ck_assert_int_lt(res->makespan_ps, plain->makespan_ps);
    /* a pair as long as its halves: the plain schedule's step */
    g_autoptr(PpsimScenario) same = dp_scenario("interleaved", 4, 8, 1, 1.5, 0.5, 3);
    g_autoptr(PpsimRunResult) r3 =
        ppsim_test_run_option(same, "interleaved", "pairs", "true", NULL);
    ck_assert_int_eq(r3->makespan_ps, plain->makespan_ps);
    /* refusals */
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimRunResult) bad =
        ppsim_test_run_option(sc, "interleaved", "pairs", "yes", &error);
    ck_assert(bad == NULL);
    ck_assert_msg(strstr(error->message, "'pairs' must be true or false, got 'yes'") != NULL, "%s",
                  error->message);
    g_autoptr(PpsimScheduleSpec) both = ppsim_schedule_spec_new("interleaved");
    const char *kv[2][2] = {{"pairs", "true"}, {"recompute", "0.5"}};
    for (int k = 0; k < 2; k++) {
        PpsimOptionValue o = {g_strdup(kv[k][0]), g_strdup(kv[k][1]), {1, 1}};
        g_array_append_val(both->options, o);
    }
    g_autoptr(GError) e2 = NULL;
    g_autoptr(PpsimRunResult) r4 = ppsim_sim_run_spec(sc, both, 0, &e2);
    ck_assert(r4 == NULL);
    ck_assert_msg(strstr(e2->message, "option 'pairs' needs option 'recompute: none'") != NULL,
                  "%s", e2->message);
}
END_TEST

/* CSV: written with `+` pair cells, read back to the same schedule (two pipelines detected
 * from where microbatches start) and the same replay. */
START_TEST(test_csv_round_trip)
{
    for (int k = 0; k < 2; k++) {
        const char *name = k == 0 ? "dualpipe" : "dualpipev";
        g_autoptr(PpsimScenario) sc = dp_scenario(name, 4, 10, 1, 1, 1, 2.5);
        g_autoptr(PpsimRunResult) res = dp_run(sc, name);
        g_autoptr(GString) csv = ppsim_schedule_to_csv(res->schedule);
        ck_assert(strchr(csv->str, '+') != NULL);
        g_autoptr(GError) error = NULL;
        g_autoptr(PpsimSchedule) back = ppsim_schedule_from_csv(csv->str, csv->len, "x", &error);
        ppsim_assert_no_error(error);
        ck_assert(ppsim_schedule_equal(back, res->schedule));
    }
}
END_TEST

static void
dp_expect_invalid(const char *csv, const char *needle)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimSchedule) s = ppsim_schedule_from_csv(csv, strlen(csv), "x", &error);
    if (s != NULL)
        ppsim_schedule_validate(s, &error);
    ck_assert_msg(error != NULL, "no error for %s", csv);
    ck_assert_msg(strstr(error->message, needle) != NULL, "%s", error->message);
}

/* The checker's rules: a pair is an F then a full backward; a microbatch stays in its
 * pipeline; a pair whose halves wait on each other is a cyclic wait. */
START_TEST(test_checker_rules)
{
    dp_expect_invalid("0F0+0I0\n", "forward and a full backward");
    dp_expect_invalid("0F0+\n", "forward and a full backward");
    /* two pipelines (mb 1 starts at stage 2), but mb 1 also has a forward at stage 1 */
    dp_expect_invalid("0F0,3F1,3B1,0B0\n1F0,2F1,1B0,2B1,1F1\n", "pipeline its microbatch");
    /* the pair's F half waits for its BW half's input, which needs that F: a cycle */
    dp_expect_invalid("0F0,0F1+0B0,0B1\n1F0,1F1,1B1,1B0\n", "cyclic wait");
    /* a valid two-pipeline file with a pair replays */
    const char *ok = "0F0,3F1+0B0,3B1\n1F0,2F1,1B0,2B1\n";
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimSchedule) s = ppsim_schedule_from_csv(ok, strlen(ok), "x", &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(s->pipe_stages, 2);
    ck_assert(ppsim_schedule_validate(s, &error));
    ck_assert(g_array_index(s->compute[0], PpsimOp, 1).flags & PPSIM_OP_FLAG_OVERLAP);
    ck_assert(g_array_index(s->compute[0], PpsimOp, 2).flags & PPSIM_OP_FLAG_OVERLAP);
}
END_TEST

/* The formula module's rows (what `ppsim validate` prints): hand-computed spans at p = 4,
 * m = 16, F = B = W = 1, F&B = 2.5 (DualPipe: 48 - 11 x 0.5 + 1.5 = 44; DualPipeV: 96 - 23 x
 * 0.5 + 3 x 1.5 = 89), and on PP 4..32 every row flagged exact equals the replay's span and
 * peaks. */
START_TEST(test_formula_rows)
{
    PpsimFormulaInput in = {4, 2, 16, 1, 1, 1, 1, 0.5, 2.5};
    PpsimFormula f;
    ck_assert(ppsim_formula_predict("dualpipe", &in, &f));
    ck_assert_double_eq(f.span, 44);
    ck_assert_double_eq(f.bubble, 1.5);
    ck_assert_double_eq(f.peak[0], 5);
    ck_assert(f.exact);
    g_free(f.peak);
    ck_assert(ppsim_formula_predict("dualpipev", &in, &f));
    ck_assert_double_eq(f.span, 89);
    ck_assert_double_eq(f.bubble, 4.5);
    ck_assert_double_eq(f.peak[3], 9);
    g_free(f.peak);
    static const double costs[][4] = {{1, 1, 1, 0}, {2, 2, 1, 4.5}, {1, 2, 1, 3.5}};
    int exact_rows = 0;
    for (int k = 0; k < 2; k++) {
        const char *name = k == 0 ? "dualpipe" : "dualpipev";
        for (int pp = 4; pp <= 32; pp += 4) {
            int p = k == 0 ? pp : pp / 2;
            for (guint c = 0; c < G_N_ELEMENTS(costs); c++) {
                const double *x = costs[c];
                int m = 2 * p + 4;
                g_autoptr(PpsimScenario) sc = dp_scenario(name, p, m, x[0], x[1], x[2], x[3]);
                sc->costs.weight_activation = 0.5;
                g_autoptr(PpsimRunResult) res = dp_run(sc, name);
                PpsimFormulaInput fi = {p, 2, m, x[0], x[1], x[2], 1, 0.5, x[3]};
                ck_assert(ppsim_formula_predict(name, &fi, &f));
                PpsimTime span = 0;
                for (int d = 0; d < p; d++)
                    span = MAX(span, res->devices[d].end_ps - res->devices[d].first_start_ps);
                if (f.exact) {
                    exact_rows++;
                    ck_assert_int_eq(span, (PpsimTime)(f.span * MS + 0.5));
                    for (int d = 0; d < p; d++)
                        ck_assert_int_eq(res->devices[d].peak_activation,
                                         (gint64)(f.peak[d] * PPSIM_EXPLICIT_MEM_SCALE));
                } else {
                    ck_assert(x[1] != x[0]); /* only the B > F set is not exact here */
                }
                g_free(f.peak);
            }
        }
    }
    ck_assert_int_eq(exact_rows, 2 * 8 * 2);
}
END_TEST

/* Same input, same bytes. */
START_TEST(test_deterministic)
{
    g_autoptr(PpsimScenario) sc = dp_scenario("dualpipe", 8, 20, 1, 1.3, 0.6, 2.4);
    g_autoptr(PpsimRunResult) a = dp_run(sc, "dualpipe");
    g_autoptr(PpsimRunResult) b = dp_run(sc, "dualpipe");
    ck_assert(ppsim_schedule_equal(a->schedule, b->schedule));
    ck_assert_int_eq(a->makespan_ps, b->makespan_ps);
}
END_TEST

Suite *
ppsim_test_suite(void)
{
    Suite *s = suite_create("dualpipe");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_readme_rows_exact);
    tcase_add_test(tc, test_readme_bound);
    tcase_add_test(tc, test_pair_cost_and_shape);
    tcase_add_test(tc, test_two_pipelines);
    tcase_add_test(tc, test_dualpipe_parameters);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_interleaved_pairs);
    tcase_add_test(tc, test_csv_round_trip);
    tcase_add_test(tc, test_checker_rules);
    tcase_add_test(tc, test_formula_rows);
    tcase_add_test(tc, test_deterministic);
    suite_add_tcase(s, tc);
    return s;
}
