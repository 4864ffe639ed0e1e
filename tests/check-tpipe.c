/* check-tpipe.c: T-Pipe and T-Recomp ([TP] §4, App. A-C) through the checker and the
 * replay, in explicit-cost mode under App. A's assumptions (T_unit = T_F = 1 ms, fused
 * backward T_B = 2 T_F, p2p = 0, activation 1 per chunk and microbatch = m_a / 2p): the
 * makespan 6(m + p - 1) and device 0's chunk ceilings of App. A, a timeline computed by
 * hand, T-Recomp's memory effects and App. C's buffer count, the stage input an R keeps in
 * hardware mode, and the refusals. */
#include "ppsim-test.h"
#include "cost/cost-model.h"
#include "util/ppsim-error.h"

#include <math.h>
#include <string.h>

static int
ceil6(int a)
{
    return a >= 0 ? (a + 5) / 6 : -((-a) / 6);
}

static PpsimRunResult *
tp_run(int p, int m, const char *key, const char *value)
{
    g_autoptr(PpsimScenario) sc = ppsim_scenario_new_explicit(p, 2, m, "tpipe");
    g_autoptr(GError) error = NULL;
    PpsimRunResult *res = ppsim_test_run_option(sc, "tpipe", key, value, &error);
    ppsim_assert_no_error(error);
    ck_assert_ptr_nonnull(res);
    return res;
}

/* T-Recomp with option layout = @layout: {name: tpipe, recompute: t-recomp, layout: ...}. */
static PpsimRunResult *
tp_run_layout(int p, int m, const char *layout)
{
    g_autoptr(PpsimScenario) sc = ppsim_scenario_new_explicit(p, 2, m, "tpipe");
    g_autoptr(PpsimScheduleSpec) spec = ppsim_schedule_spec_new("tpipe");
    PpsimOptionValue rc = {g_strdup("recompute"), g_strdup("t-recomp"), {1, 1}};
    PpsimOptionValue lay = {g_strdup("layout"), g_strdup(layout), {1, 1}};
    g_array_append_val(spec->options, rc);
    g_array_append_val(spec->options, lay);
    g_autoptr(GError) error = NULL;
    PpsimRunResult *res = ppsim_sim_run_spec(sc, spec, 0, &error);
    ppsim_assert_no_error(error);
    ck_assert_ptr_nonnull(res);
    return res;
}

/* Start and end (ms) of op (@kind, @stage, @mb) in @res's replay; fails when absent. */
static void
op_span(const PpsimRunResult *res, PpsimOpKind kind, int stage, int mb, double *start, double *end)
{
    for (int d = 0; d < res->schedule->n_devices; d++)
        for (guint i = 0; i < res->schedule->compute[d]->len; i++) {
            const PpsimOp *op = &g_array_index(res->schedule->compute[d], PpsimOp, i);
            if (op->kind != kind || op->stage != stage || op->microbatch != mb)
                continue;
            const PpsimOpTiming *t = &g_array_index(res->compute_timing[d], PpsimOpTiming, i);
            *start = (double)t->start_ps / PPSIM_PS_PER_MS;
            *end = (double)t->end_ps / PPSIM_PS_PER_MS;
            return;
        }
    ck_abort_msg("no op kind %d stage %d microbatch %d", kind, stage, mb);
}

static PpsimRunResult *
tp_run_paper(int p, int m)
{
    return tp_run_layout(p, m, "paper");
}

static double
units(const PpsimRunResult *res, gint64 v)
{
    return (double)v / res->mem_scale;
}

/* App. A: makespan 6(m + p - 1) T_unit; on device 0, chunk 1 (stage 0) peaks at
 * ceil(2/3 + ceil((p-3)/6) + ceil((2p-3)/6) + p/2) blocks and chunk 2 (stage p) at
 * ceil((3p-2)/6), at most m each. For even p the device peak is their sum. */
START_TEST(test_app_a)
{
    static const int ps[] = {1, 2, 3, 4, 5, 6, 8, 12, 16};
    for (guint i = 0; i < G_N_ELEMENTS(ps); i++) {
        int p = ps[i];
        int ms[] = {1, MAX(p - 1, 1), p, 2 * p, 3 * p, 64};
        for (guint k = 0; k < G_N_ELEMENTS(ms); k++) {
            int m = ms[k];
            g_autoptr(PpsimRunResult) res = tp_run(p, m, NULL, NULL);
            ck_assert_int_eq(res->makespan_ps, (PpsimTime)6 * (m + p - 1) * PPSIM_PS_PER_MS);
            /* ceil(2/3 + kf + kb + p/2) written as kf + kb + ceil((3p + 4)/6) */
            int c1 = MIN(m, ceil6(p - 3) + ceil6(2 * p - 3) + ceil6(3 * p + 4));
            int c2 = MIN(m, ceil6(3 * p - 2));
            ck_assert_msg(units(res, res->stages[0].peak_activation) == c1,
                          "p=%d m=%d chunk 1: %g vs %d", p, m,
                          units(res, res->stages[0].peak_activation), c1);
            ck_assert_msg(units(res, res->stages[p].peak_activation) == c2,
                          "p=%d m=%d chunk 2: %g vs %d", p, m,
                          units(res, res->stages[p].peak_activation), c2);
            if (p % 2 == 0)
                ck_assert_double_eq(units(res, res->devices[0].peak_activation), c1 + c2);
            /* the bubble ratio is 1F1B's, (p-1)/(m+p-1) (App. A): every device is busy
             * exactly m (F1 + F2 + two fused backwards) = 6m T_unit of the 6(m+p-1) */
            for (int d = 0; d < p; d++)
                ck_assert_int_eq(res->devices[d].busy_ps, (PpsimTime)6 * m * PPSIM_PS_PER_MS);
            ck_assert_double_eq_tol(res->bubble_ratio, (double)(p - 1) / (m + p - 1), 1e-12);
        }
    }
}
END_TEST

/* Large p: device 0 holds about 0.75 m_a (App. A), i.e. 1.5 p blocks of m_a / 2p. */
START_TEST(test_app_a_three_quarters)
{
    int p = 64, m = 256;
    g_autoptr(PpsimRunResult) res = tp_run(p, m, NULL, NULL);
    double share = units(res, res->devices[0].peak_activation) / (2.0 * p);
    ck_assert_msg(share > 0.75 && share < 0.80, "device 0 holds %g m_a", share);
}
END_TEST

/* p = 2, m = 2 by hand: kf = 0, kb = 1, so the periodic order of device 0 is F1(0) F2(0)
 * F1(1) B2(0) F2(1) B2(1) B1(0) B1(1) and of device 1 F1(0) F2(0) B2(0) F1(1) F2(1) B2(1)
 * B1(0) B1(1); replayed as soon as inputs allow (F = 1, BW = 2) they start at the times
 * below, and the last op ends at 18 = 6(m + p - 1). */
START_TEST(test_hand_timeline)
{
    static const int want[2][8][4] = {
        {{'F', 0, 0, 0},
         {'F', 2, 0, 2},
         {'F', 0, 1, 3},
         {'B', 2, 0, 6},
         {'F', 2, 1, 8},
         {'B', 2, 1, 12},
         {'B', 0, 0, 14},
         {'B', 0, 1, 16}},
        {{'F', 1, 0, 1},
         {'F', 3, 0, 3},
         {'B', 3, 0, 4},
         {'F', 1, 1, 6},
         {'F', 3, 1, 9},
         {'B', 3, 1, 10},
         {'B', 1, 0, 12},
         {'B', 1, 1, 14}},
    };
    g_autoptr(PpsimRunResult) res = tp_run(2, 2, NULL, NULL);
    for (int d = 0; d < 2; d++) {
        const GArray *ops = res->schedule->compute[d];
        ck_assert_int_eq(ops->len, 8);
        for (int i = 0; i < 8; i++) {
            const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
            const PpsimOpTiming *t = &g_array_index(res->compute_timing[d], PpsimOpTiming, i);
            ck_assert_int_eq(op->kind, want[d][i][0] == 'F' ? PPSIM_OP_F : PPSIM_OP_BW);
            ck_assert_int_eq(op->stage, want[d][i][1]);
            ck_assert_int_eq(op->microbatch, want[d][i][2]);
            ck_assert_int_eq(t->start_ps, (PpsimTime)want[d][i][3] * PPSIM_PS_PER_MS);
        }
    }
    ck_assert_int_eq(res->makespan_ps, 18 * PPSIM_PS_PER_MS);
}
END_TEST

/* T-Recomp: chunk 1 keeps nothing after F (explicit mode has no checkpoint), its R
 * allocates the activation as a buffer that B frees, and R runs after the previous
 * microbatch's B1: stage 0 never holds more than one block. Device 0 then holds
 * floor(p/2) chunk-2 blocks plus that buffer for even p (App. C's floor(p/2) + 1, about
 * 0.25 m_a), and the makespan stays within App. C's [6p + 7(m-1)] T_unit; with either
 * layout. */
START_TEST(test_t_recomp)
{
    static const int ps[] = {2, 4, 6, 8, 10, 12, 16, 24, 32};
    for (guint i = 0; i < 2 * G_N_ELEMENTS(ps); i++) {
        int p = ps[i / 2], m = 4 * p;
        g_autoptr(PpsimRunResult) res = tp_run_layout(p, m, i % 2 ? "searched" : "paper");
        ck_assert_double_eq(units(res, res->stages[0].peak_activation), 1);
        ck_assert_msg(units(res, res->devices[0].peak_activation) == p / 2 + 1,
                      "p=%d: device 0 holds %g, App. C floor(p/2)+1 = %d", p,
                      units(res, res->devices[0].peak_activation), p / 2 + 1);
        PpsimTime claim = (PpsimTime)(6 * p + 7 * (m - 1)) * PPSIM_PS_PER_MS;
        ck_assert_msg(res->makespan_ps <= claim, "p=%d: makespan %g > %d", p,
                      (double)res->makespan_ps / PPSIM_PS_PER_MS, 6 * p + 7 * (m - 1));
        /* every chunk-1 microbatch is recomputed once, none of chunk 2's */
        int n_r = 0;
        for (int d = 0; d < p; d++)
            for (guint k = 0; k < res->schedule->compute[d]->len; k++) {
                const PpsimOp *op = &g_array_index(res->schedule->compute[d], PpsimOp, k);
                if (op->kind == PPSIM_OP_R) {
                    ck_assert_int_lt(op->stage, p);
                    n_r++;
                }
            }
        ck_assert_int_eq(n_r, p * m);
        ck_assert_int_eq(res->devices[0].recompute_ps, (PpsimTime)m * PPSIM_PS_PER_MS);
    }
}
END_TEST

/* Any p and m, including m < p and odd p: valid, replayable, every device done. */
START_TEST(test_grid)
{
    for (int p = 1; p <= 9; p++)
        for (int m = 1; m <= 2 * p + 1; m += MAX(1, p / 2)) {
            g_autoptr(PpsimRunResult) a = tp_run(p, m, NULL, NULL);
            g_autoptr(PpsimRunResult) b = tp_run(p, m, "recompute", "t-recomp");
            ck_assert_int_gt(b->makespan_ps, 0);
            ck_assert_int_le(b->devices[0].peak_activation, a->devices[0].peak_activation);
            /* T-Offload with free transfers and steps changes no GPU timing */
            g_autoptr(PpsimRunResult) c = tp_run(p, m, "offload_optimizer", "t-offload");
            ck_assert_int_eq(c->makespan_ps, a->makespan_ps);
            ck_assert_double_eq(c->devices[0].optimizer_overlap, 1.0);
        }
}
END_TEST

/* `layout: paper`, [TP] App. C's rounds (Fig. 6(d)). Device 0 holds App. C's
 * floor(p/2) + 1 blocks for every p from 2 to 40, odd p included (stage 0 one: the buffer).
 * App. C's [6p + 7(m-1)] counts three phases, and the replay meets two exactly: microbatch
 * 0's forward ends on device p-1 at 2p (warm-up) and the last backward runs 4p without a
 * gap after the last chunk-2 forward (cool-down). The steady phase is 7(m-1) - delta with
 * 0 <= delta <= 7: the makespan equals App. C's where B1 follows B2 in the round without
 * waiting for its slot, (4 - 2p) mod 7 = 0, i.e. p = 2 (mod 7), and is below it elsewhere;
 * delta is the same for every m >= p. In steady state each device repeats the round
 * B2 F R B1 F (B2 of its deep stage, R and B1 of its shallow one). */
START_TEST(test_paper_layout)
{
    for (int p = 2; p <= 40; p++) {
        int delta = -1;
        int ms[] = {p, 4 * p};
        for (guint k = 0; k < G_N_ELEMENTS(ms); k++) {
            int m = ms[k];
            g_autoptr(PpsimRunResult) res = tp_run_paper(p, m);
            ck_assert_msg(units(res, res->devices[0].peak_activation) == p / 2 + 1,
                          "p=%d m=%d: device 0 holds %g, App. C floor(p/2)+1 = %d", p, m,
                          units(res, res->devices[0].peak_activation), p / 2 + 1);
            ck_assert_double_eq(units(res, res->stages[0].peak_activation), 1);
            double ms_end = (double)res->makespan_ps / PPSIM_PS_PER_MS, s, e, s_last, e_last;
            int claim = 6 * p + 7 * (m - 1);
            ck_assert_msg(ms_end <= claim, "p=%d m=%d: %g > %d", p, m, ms_end, claim);
            op_span(res, PPSIM_OP_F, 2 * p - 1, 0, &s, &e);
            ck_assert_msg(e == 2 * p, "p=%d: microbatch 0's forward ends at %g", p, e);
            op_span(res, PPSIM_OP_F, 2 * p - 1, m - 1, &s_last, &e_last);
            ck_assert_msg(ms_end - e_last == 4 * p, "p=%d m=%d: cool-down %g", p, m,
                          ms_end - e_last);
            int d_now = claim - (int)ms_end;
            ck_assert_int_le(d_now, 7);
            ck_assert_msg(delta < 0 || d_now == delta, "p=%d: delta %d at m=%d, %d at m=%d", p,
                          d_now, m, delta, p);
            delta = d_now;
            ck_assert_msg((delta == 0) == (p % 7 == 2), "p=%d: delta %d", p, delta);
            /* the round, from microbatch p on (past the warm-up) */
            for (int d = 0; d < p && m == 4 * p; d++) {
                const GArray *ops = res->schedule->compute[d];
                guint i0 = 0;
                while (g_array_index(ops, PpsimOp, i0).kind != PPSIM_OP_BW ||
                       g_array_index(ops, PpsimOp, i0).microbatch < p)
                    i0++;
                static const PpsimOpKind round[] = {PPSIM_OP_BW, PPSIM_OP_F, PPSIM_OP_R,
                                                    PPSIM_OP_BW, PPSIM_OP_F};
                for (guint i = i0; i < i0 + 5 * (guint)p; i++) {
                    const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
                    ck_assert_int_eq(op->kind, round[(i - i0) % 5]);
                    if ((i - i0) % 5 == 0)
                        ck_assert_int_eq(op->stage, p + d);
                    if ((i - i0) % 5 == 2 || (i - i0) % 5 == 3)
                        ck_assert_int_eq(op->stage, d);
                }
            }
        }
    }
}
END_TEST

/* p = 2, m = 2 by hand. Device d runs round slot (t + 2d) mod 7 at time t of the round
 * table: B2 in slots 0-1, F in 2, R in 3, B1 in 4-5, F in 6; chunk 1 starts on device 0 in
 * slot 6 (even p), so the table puts device 0 at F1 6, F2 9, B2 14, R 17, B1 18 and device 1
 * at F1 7, F2 11, B2 12, R 15, B1 16, microbatch j 7j later. Sorted, the orders are
 * device 0: F1(0) F2(0) F1(1) B2(0) F2(1) R(0) B1(0) B2(1) R(1) B1(1) and device 1: F1(0)
 * F2(0) B2(0) F1(1) R(0) B1(0) F2(1) B2(1) R(1) B1(1). Replayed with F = R = 1, BW = 2 they
 * start at the times below and end at 19 = 6p + 7(m-1). Device 0 holds 2 blocks: F2(1)'s
 * from 8 to 15 with R(0)'s buffer from 9 to 12, F2(0)'s with F1(1)'s transient at 3. */
START_TEST(test_paper_hand_timeline)
{
    static const int want[2][10][4] = {
        {{'F', 0, 0, 0},
         {'F', 2, 0, 2},
         {'F', 0, 1, 3},
         {'B', 2, 0, 6},
         {'F', 2, 1, 8},
         {'R', 0, 0, 9},
         {'B', 0, 0, 10},
         {'B', 2, 1, 13},
         {'R', 0, 1, 15},
         {'B', 0, 1, 17}},
        {{'F', 1, 0, 1},
         {'F', 3, 0, 3},
         {'B', 3, 0, 4},
         {'F', 1, 1, 6},
         {'R', 1, 0, 7},
         {'B', 1, 0, 8},
         {'F', 3, 1, 10},
         {'B', 3, 1, 11},
         {'R', 1, 1, 13},
         {'B', 1, 1, 15}},
    };
    g_autoptr(PpsimRunResult) res = tp_run_paper(2, 2);
    for (int d = 0; d < 2; d++) {
        const GArray *ops = res->schedule->compute[d];
        ck_assert_int_eq(ops->len, 10);
        for (int i = 0; i < 10; i++) {
            const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
            const PpsimOpTiming *t = &g_array_index(res->compute_timing[d], PpsimOpTiming, i);
            PpsimOpKind kind = want[d][i][0] == 'F'   ? PPSIM_OP_F
                               : want[d][i][0] == 'R' ? PPSIM_OP_R
                                                      : PPSIM_OP_BW;
            ck_assert_int_eq(op->kind, kind);
            ck_assert_int_eq(op->stage, want[d][i][1]);
            ck_assert_int_eq(op->microbatch, want[d][i][2]);
            ck_assert_int_eq(t->start_ps, (PpsimTime)want[d][i][3] * PPSIM_PS_PER_MS);
        }
    }
    ck_assert_int_eq(res->makespan_ps, 19 * PPSIM_PS_PER_MS);
    ck_assert_double_eq(units(res, res->devices[0].peak_activation), 2);
}
END_TEST

/* Against `layout: searched`, in App. A's units: never slower and never more memory on
 * device 0, for every p from 1 to 12 and m from 1 to 2p + 1 (strictly less of one or the
 * other somewhere, e.g. a block at p = 5 and 9). `paper` is the default. Without t-recomp,
 * `layout` changes nothing: App. A's closed form is the paper's. */
START_TEST(test_paper_vs_searched)
{
    gboolean some_better = FALSE;
    for (int p = 1; p <= 12; p++)
        for (int m = 1; m <= 2 * p + 1; m++) {
            g_autoptr(PpsimRunResult) paper = tp_run_paper(p, m);
            g_autoptr(PpsimRunResult) searched = tp_run_layout(p, m, "searched");
            ck_assert_int_le(paper->makespan_ps, searched->makespan_ps);
            ck_assert_int_le(paper->devices[0].peak_activation,
                             searched->devices[0].peak_activation);
            some_better |= paper->makespan_ps < searched->makespan_ps ||
                           paper->devices[0].peak_activation < searched->devices[0].peak_activation;
        }
    ck_assert(some_better);
    g_autoptr(PpsimRunResult) dflt = tp_run(5, 20, "recompute", "t-recomp");
    g_autoptr(PpsimRunResult) paper = tp_run_paper(5, 20);
    g_autoptr(GString) d_csv = ppsim_schedule_to_csv(dflt->schedule);
    g_autoptr(GString) p_csv = ppsim_schedule_to_csv(paper->schedule);
    ck_assert_str_eq(d_csv->str, p_csv->str);
    g_autoptr(PpsimRunResult) plain = tp_run(4, 8, NULL, NULL);
    g_autoptr(PpsimRunResult) plain_paper = tp_run(4, 8, "layout", "paper");
    ck_assert_int_eq(plain_paper->makespan_ps, plain->makespan_ps);
    g_autoptr(GString) a = ppsim_schedule_to_csv(plain->schedule);
    g_autoptr(GString) b = ppsim_schedule_to_csv(plain_paper->schedule);
    ck_assert_str_eq(a->str, b->str);
}
END_TEST

/* App. C's baseline, 1F1B + 50% recompute, in App. C's units (a 1F1B stage is two chunks:
 * F = 2, BW = 4, R = 1, activation 2 blocks of m_a / 2p): device 0 keeps half of each of p
 * microbatches plus one block (the recompute buffer, or a forward's transient), p + 1
 * blocks = 0.5 m_a + m_a / 2p. The R of each microbatch has no input but the checkpoint, so
 * in the cool-down it runs while the device waits for the gradient: the makespan is
 * 7m + 6(p-1), p - 1 below App. C's 7(m - 1 + p), and T-Pipe + T-Recomp is faster still
 * at about half the memory. */
START_TEST(test_1f1b_half_recompute)
{
    static const int ps[] = {2, 4, 8, 16};
    for (guint i = 0; i < G_N_ELEMENTS(ps); i++) {
        int p = ps[i], m = 4 * p;
        g_autoptr(PpsimScenario) sc = ppsim_scenario_new_explicit(p, 1, m, "1f1b");
        sc->costs.forward_ps = sc->costs.backward_input_ps = sc->costs.backward_weight_ps =
            sc->costs.recompute_ps = 2 * PPSIM_PS_PER_MS;
        sc->costs.activation = sc->costs.weight_activation = 2;
        g_autoptr(GError) error = NULL;
        g_autoptr(PpsimRunResult) res =
            ppsim_test_run_option(sc, "1f1b", "recompute", "0.5", &error);
        ppsim_assert_no_error(error);
        ck_assert_double_eq(units(res, res->devices[0].peak_activation), p + 1);
        ck_assert_int_eq(res->makespan_ps, (PpsimTime)(7 * m + 6 * (p - 1)) * PPSIM_PS_PER_MS);
        ck_assert_int_eq(res->devices[0].recompute_ps, (PpsimTime)m * PPSIM_PS_PER_MS);
        g_autoptr(PpsimRunResult) tp = tp_run(p, m, "recompute", "t-recomp");
        ck_assert_int_le(tp->makespan_ps, res->makespan_ps);
        ck_assert_int_lt(tp->devices[0].peak_activation, res->devices[0].peak_activation);
    }
}
END_TEST

/* 1F1B-I + T-Recomp (Fig. 6(e)): chunk 1 keeps nothing but its buffer; the deeper chunk
 * keeps everything; the R's are exported as plain R cells and partial ones as `%share`. */
START_TEST(test_interleaved_t_recomp)
{
    int p = 4, m = 8;
    g_autoptr(PpsimScenario) sc = ppsim_scenario_new_explicit(p, 2, m, "interleaved");
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimRunResult) plain = ppsim_test_run_option(sc, "interleaved", NULL, NULL, &error);
    g_autoptr(PpsimRunResult) tr =
        ppsim_test_run_option(sc, "interleaved", "recompute", "t-recomp", &error);
    ppsim_assert_no_error(error);
    ck_assert_double_eq(units(tr, tr->stages[0].peak_activation), 1);
    ck_assert_int_eq(tr->stages[p].peak_activation, plain->stages[p].peak_activation);
    ck_assert_int_lt(tr->devices[0].peak_activation, plain->devices[0].peak_activation);
    g_autoptr(PpsimRunResult) half =
        ppsim_test_run_option(sc, "interleaved", "recompute", "0.25", &error);
    ppsim_assert_no_error(error);
    g_autoptr(GString) csv = ppsim_schedule_to_csv(half->schedule);
    ck_assert_ptr_nonnull(strstr(csv->str, "R0%25,"));
    g_autoptr(PpsimSchedule) back = ppsim_schedule_from_csv(csv->str, csv->len, "x.csv", &error);
    ppsim_assert_no_error(error);
    g_autoptr(GString) again = ppsim_schedule_to_csv(back);
    ck_assert_str_eq(csv->str, again->str);
    g_autoptr(PpsimSchedule) bad = ppsim_schedule_from_csv("0F0,0R0%0,0B0\n", 13, "x.csv", &error);
    ck_assert_ptr_null(bad);
    ppsim_assert_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_PARSE);
}
END_TEST

/* Hardware mode: an R re-runs its stage's forward as one block ([TP] §4.2), so F keeps only
 * the stage's input, whatever the layer count: one layer input of 2sbh bytes ([KOR] Table 2;
 * split t ways only with sequence parallelism), and on the first stage the token ids (8
 * bytes each; the embedding is re-run too). 1F1B with recompute 1 on p = 4 stages of 4 GPT
 * layers: device 0 holds 3 checkpoints while the 4th microbatch's F (or the first R's
 * buffer) holds a whole activation A: peak 3 x 8sb + A. */
START_TEST(test_recompute_checkpoint_hw)
{
    const char *yaml = "hardware: {preset: dgx-a100-80gb}\n"
                       "model: {layers: 16, hidden: 1024, heads: 16, seq_len: 1024, vocab: 32000}\n"
                       "training: {pp: 4, microbatches: 8}\n"
                       "schedule: {name: 1f1b, recompute: 1}\n";
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc =
        ppsim_scenario_parse(yaml, strlen(yaml), "t.yaml", NULL, NULL, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimCosts) costs = ppsim_costs_new(sc, 4, &error);
    ppsim_assert_no_error(error);
    gint64 sbh = 1024 * 1024;
    ck_assert_int_eq(costs->stage[0].act_ckpt, 8 * 1024);
    for (int s = 1; s < 4; s++)
        ck_assert_int_eq(costs->stage[s].act_ckpt, 2 * sbh);
    g_autoptr(PpsimRunResult) res =
        ppsim_sim_run_spec(sc, g_ptr_array_index(sc->schedules, 0), 0, &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(res->devices[0].peak_activation, 3 * 8 * 1024 + costs->stage[0].est.act);
    static const char *const tp2[] = {"parallel.tp=2", NULL};
    static const char *const tp2_sp[] = {"parallel.tp=2", "parallel.sequence_parallel=true", NULL};
    for (int with_sp = 0; with_sp < 2; with_sp++) {
        g_autoptr(PpsimScenario) par = ppsim_scenario_parse(yaml, strlen(yaml), "t.yaml", NULL,
                                                            with_sp ? tp2_sp : tp2, &error);
        ppsim_assert_no_error(error);
        g_autoptr(PpsimCosts) pc = ppsim_costs_new(par, 4, &error);
        ppsim_assert_no_error(error);
        ck_assert_int_eq(pc->stage[1].act_ckpt, with_sp ? sbh : 2 * sbh);
    }
}
END_TEST

static void
expect_refusal(const char *key, const char *value, const char *needle)
{
    g_autoptr(PpsimScenario) sc = ppsim_scenario_new_explicit(4, 2, 8, "tpipe");
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimRunResult) res = ppsim_test_run_option(sc, "tpipe", key, value, &error);
    ck_assert_ptr_null(res);
    ppsim_assert_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED);
    ck_assert_msg(strstr(error->message, needle) != NULL, "message: %s", error->message);
    ck_assert_ptr_null(strchr(error->message, '\n'));
}

START_TEST(test_refusals)
{
    expect_refusal("chunks", "4", "option 'chunks' must be 2");
    expect_refusal("recompute", "full", "option 'recompute' must be 'none' or 't-recomp'");
    expect_refusal("offload_optimizer", "cpu", "option 'offload_optimizer' must be 'none' or");
    expect_refusal("layout", "fig6d", "option 'layout' must be 'paper' or 'searched', got 'fig6d'");
    expect_refusal("bits", "0", "option 'bits' must be between 1 and 16");
    g_autoptr(PpsimScenario) sc = ppsim_scenario_new_explicit(4, 1, 8, "1f1b");
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimRunResult) res =
        ppsim_test_run_option(sc, "1f1b", "recompute", "t-recomp", &error);
    ck_assert_ptr_null(res);
    ppsim_assert_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(error->message, "option 'recompute' must be 'none' or a ratio"));
    g_autoptr(PpsimScenario) one = ppsim_scenario_new_explicit(4, 1, 8, "interleaved");
    g_autoptr(GError) err1 = NULL;
    g_autoptr(PpsimRunResult) r1 =
        ppsim_test_run_option(one, "interleaved", "recompute", "t-recomp", &err1);
    ck_assert_ptr_null(r1);
    ppsim_assert_error(err1, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(err1->message, "at least 2 chunks"));
}
END_TEST

Suite *
ppsim_test_suite(void)
{
    Suite *s = suite_create("tpipe");
    TCase *tc = tcase_create("app-a");
    tcase_add_test(tc, test_app_a);
    tcase_add_test(tc, test_app_a_three_quarters);
    tcase_add_test(tc, test_hand_timeline);
    suite_add_tcase(s, tc);
    tc = tcase_create("t-recomp");
    tcase_add_test(tc, test_t_recomp);
    tcase_add_test(tc, test_grid);
    tcase_add_test(tc, test_paper_layout);
    tcase_add_test(tc, test_paper_hand_timeline);
    tcase_add_test(tc, test_paper_vs_searched);
    tcase_add_test(tc, test_1f1b_half_recompute);
    tcase_add_test(tc, test_interleaved_t_recomp);
    tcase_add_test(tc, test_recompute_checkpoint_hw);
    suite_add_tcase(s, tc);
    tc = tcase_create("options");
    tcase_add_test(tc, test_refusals);
    suite_add_tcase(s, tc);
    return s;
}
