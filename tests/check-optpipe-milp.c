/* check-optpipe-milp.c: the MILP binding and the optpipe generator against independent
 * truth: a hand-checked tiny MIP; on tiny pipelines (p = 2-4, m <= 8) CBC proves
 * optimality, the replayed makespan equals the MILP objective, the schedule fits the memory
 * limit and is no slower than any other ppsim generator that fits it; and on the smallest
 * the optimum equals an exhaustive search over every per-device order (this file's own
 * timeline and memory code, no microbatch order fixed); the shared-switch constraint (Eq. 18)
 * on its own; the time limit as a hard wall-clock bound. */
#include "ppsim-test.h"
#include "milp/milp.h"
#include "sched/co-schedule.h"
#include "sched/optpipe/op-eval.h"
#include "sched/optpipe/op-milp.h"
#include "schedule/schedule-index.h"
#include "sched/registry.h"
#include "sim/sim.h"
#include "util/ppsim-error.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* max 5x + 4y + 3z s.t. 2x + 3y + z <= 5, 4x + y + 2z <= 11, 3x + 4y + 2z <= 8, binary:
 * by hand (8 points; xyz breaks the first row) the optimum is x = y = 1 (9, then xz 8, yz
 * 7); as a minimisation, -9. An
 * infeasible one: x + y >= 3 with binaries. */
START_TEST(test_milp_binding)
{
    g_autoptr(PpsimMilp) milp = ppsim_milp_new();
    int x = ppsim_milp_add_col(milp, 0, 1, -5, TRUE), y = ppsim_milp_add_col(milp, 0, 1, -4, TRUE),
        z = ppsim_milp_add_col(milp, 0, 1, -3, TRUE);
    int cols[3] = {x, y, z};
    double r1[3] = {2, 3, 1}, r2[3] = {4, 1, 2}, r3[3] = {3, 4, 2};
    ppsim_milp_add_row(milp, 3, cols, r1, 'L', 5);
    ppsim_milp_add_row(milp, 3, cols, r2, 'L', 11);
    ppsim_milp_add_row(milp, 3, cols, r3, 'L', 8);
    ppsim_milp_set_start(milp, y, 1); /* a feasible but worse start (-4) */
    PpsimMilpOptions o = {.time_limit_s = 5, .threads = 1};
    PpsimMilpResult r;
    g_autoptr(GError) error = NULL;
    ck_assert(ppsim_milp_solve(milp, &o, &r, &error));
    ck_assert_str_eq(ppsim_milp_status_name(&r), "optimal");
    ck_assert_msg(fabs(r.objective + 9) < 1e-9 && fabs(r.bound + 9) < 1e-6 && r.gap == 0,
                  "objective %g bound %g gap %g", r.objective, r.bound, r.gap);
    ck_assert(r.x[x] > 0.5 && r.x[y] > 0.5 && r.x[z] < 0.5);
    ppsim_milp_result_clear(&r);
    double one[2] = {1, 1};
    ppsim_milp_add_row(milp, 2, cols, one, 'G', 3);
    ck_assert(ppsim_milp_solve(milp, &o, &r, &error));
    ck_assert_str_eq(ppsim_milp_status_name(&r), "infeasible");
    ck_assert(r.x == NULL);
}
END_TEST

/* ---- exhaustive search: every order of F, B, W per device (F(j) < B(j) < W(j) only) ---- */

typedef struct {
    int p, m;
    int f, b, w, comm; /* integer ticks */
    int limit;         /* activations per device (act = 1, act_w = 1: W frees); 0: none */
    int seq[4][24];    /* per device: op = kind * m + j */
    int best;
} Exh;

/* ASAP timeline of the orders in @e->seq; -1 if they deadlock or exceed the limit. */
static int
exh_eval(const Exh *e)
{
    int p = e->p, m = e->m, n = 3 * m;
    int end[4][3][8], pos[4], clock[4];
    for (int d = 0; d < p; d++) {
        pos[d] = clock[d] = 0;
        for (int k = 0; k < 3; k++)
            for (int j = 0; j < m; j++)
                end[d][k][j] = -1;
    }
    int dur[3] = {e->f, e->b, e->w}, done = 0, makespan = 0;
    while (done < p * n) {
        gboolean progress = FALSE;
        for (int d = 0; d < p; d++) {
            if (pos[d] == n)
                continue;
            int op = e->seq[d][pos[d]], k = op / m, j = op % m, ready = clock[d];
            int dep = -1; /* the op it waits for on another device */
            if (k == 0 && d > 0)
                dep = end[d - 1][0][j] < 0 ? -2 : end[d - 1][0][j] + e->comm;
            if (k == 1 && d < p - 1)
                dep = end[d + 1][1][j] < 0 ? -2 : end[d + 1][1][j] + e->comm;
            if (dep == -2)
                continue;
            ready = MAX(ready, dep);
            clock[d] = end[d][k][j] = ready + dur[k];
            makespan = MAX(makespan, clock[d]);
            pos[d]++, done++, progress = TRUE;
        }
        if (!progress)
            return -1;
    }
    for (int d = 0; e->limit > 0 && d < p; d++) { /* F allocates at start, W frees at end */
        for (int j = 0; j < m; j++) {
            int t = end[d][0][j] - e->f, held = 0;
            for (int i = 0; i < m; i++)
                held += end[d][0][i] - e->f <= t && end[d][2][i] > t;
            if (held > e->limit)
                return -1;
        }
    }
    return makespan;
}

/* Enumerates device @d's orders (and recursively the next devices'). */
static void
exh_device(Exh *e, int d, int at, int *next)
{
    int m = e->m;
    if (d == e->p) {
        int t = exh_eval(e);
        if (t >= 0 && (e->best < 0 || t < e->best))
            e->best = t;
        return;
    }
    if (at == 3 * m) {
        int nx[3 * 8] = {0};
        exh_device(e, d + 1, 0, nx);
        return;
    }
    for (int j = 0; j < m; j++) /* next[j]: the kind microbatch j runs next on device d */
        if (next[j] < 3) {
            e->seq[d][at] = next[j] * m + j;
            next[j]++;
            exh_device(e, d, at + 1, next);
            next[j]--;
        }
}

static PpsimScenario *
milp_scenario(const Exh *e)
{
    PpsimScenario *sc = ppsim_scenario_new_explicit(e->p, 1, e->m, "optpipe");
    sc->costs.forward_ps = e->f * PPSIM_PS_PER_MS;
    sc->costs.backward_input_ps = e->b * PPSIM_PS_PER_MS;
    sc->costs.backward_weight_ps = e->w * PPSIM_PS_PER_MS;
    sc->costs.p2p_ps = e->comm * PPSIM_PS_PER_MS;
    sc->memory_limit_units = e->limit;
    sc->memory_limit_set = e->limit > 0;
    return sc;
}

/* Builds and replays optpipe on @sc with the options @kv (key, value pairs, NULL-ended). */
static PpsimRunResult *
run_optpipe_kv(const PpsimScenario *sc, const char *const *kv, PpsimSolverReport *rep,
               GError **error)
{
    g_autoptr(PpsimScheduleSpec) spec = ppsim_schedule_spec_new("optpipe");
    for (int k = 0; kv[k] != NULL; k += 2) {
        PpsimOptionValue o = {g_strdup(kv[k]), g_strdup(kv[k + 1]), {1, 1}};
        g_array_append_val(spec->options, o);
    }
    PpsimCosts *costs = NULL;
    PpsimSchedule *s = ppsim_sim_build_schedule_full(sc, spec, &costs, rep, error);
    if (s == NULL)
        return NULL;
    PpsimRunResult *res = ppsim_sim_replay(sc, costs, s, "optpipe", "optpipe", 0, error);
    ppsim_costs_free(costs);
    return res;
}

static PpsimRunResult *
run_optpipe(const PpsimScenario *sc, const char *offload, const char *time_limit,
            PpsimSolverReport *rep, GError **error)
{
    const char *kv[] = {"offload", offload, "time_limit", time_limit, NULL};
    return run_optpipe_kv(sc, kv, rep, error);
}

/* The smallest instances: CBC's proved optimum (no offload) equals the exhaustive optimum
 * over every order, with and without a memory limit, and the replay equals the objective. */
START_TEST(test_milp_exhaustive)
{
    const int cases[][7] = {
        /* p, m, F, B, W, comm, limit */
        {2, 2, 1, 1, 1, 0, 0}, {2, 3, 1, 1, 1, 0, 0}, {2, 3, 2, 3, 1, 1, 0}, {2, 3, 1, 2, 1, 0, 2},
        {2, 3, 2, 1, 3, 1, 1}, {3, 2, 1, 1, 1, 0, 0}, {3, 2, 2, 3, 1, 1, 1}, {2, 3, 3, 1, 2, 0, 2},
    };
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
        const int *k = cases[c];
        Exh e = {k[0], k[1], k[2], k[3], k[4], k[5], k[6], {{0}}, -1};
        int next[24] = {0};
        exh_device(&e, 0, 0, next);
        ck_assert_int_gt(e.best, 0);
        g_autoptr(PpsimScenario) sc = milp_scenario(&e);
        PpsimSolverReport rep = {0};
        g_autoptr(GError) error = NULL;
        g_autoptr(PpsimRunResult) res = run_optpipe(sc, "none", "60", &rep, &error);
        ppsim_assert_no_error(error);
        ck_assert_str_eq(rep.status, "optimal");
        ck_assert_msg(res->makespan_ps == (PpsimTime)e.best * PPSIM_PS_PER_MS,
                      "case %u: optpipe %g ms, exhaustive %d ms", c,
                      res->makespan_ps / (double)PPSIM_PS_PER_MS, e.best);
        ck_assert(fabs(rep.objective_ms - e.best) < 1e-6);
        ck_assert(!ppsim_run_result_any_oom(res));
    }
}
END_TEST

/* p = 2-4, m <= 8, several costs and limits, offload on: when CBC proves optimality the
 * replay equals the objective, fits, and no other generator that fits the same limit is
 * faster (each replayed); whatever the status, never slower than AdaOffload. */
START_TEST(test_milp_beats_generators)
{
    const double cases[][8] = {
        /* p, m, F, B, W, offload, comm, limit */
        {2, 4, 1, 1, 1, 0.5, 0, 2}, {3, 4, 1, 1, 1, 0.5, 0, 3}, {3, 4, 1, 2, 1, 0.7, 0.1, 0},
        {4, 8, 1, 1, 1, 0.5, 0, 0}, {2, 6, 1, 1, 1, 2, 0, 2},   {2, 8, 1, 1, 1, 0.5, 0, 2},
        {3, 4, 1, 1, 1, 0.5, 0, 2}, /* not proved within the limit: only "never worse" */
    };
    int n_optimal = 0;
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
        const double *k = cases[c];
        g_autoptr(PpsimScenario) sc = ppsim_scenario_new_explicit((int)k[0], 1, (int)k[1], "x");
        sc->costs.forward_ps = (PpsimTime)(k[2] * PPSIM_PS_PER_MS);
        sc->costs.backward_input_ps = (PpsimTime)(k[3] * PPSIM_PS_PER_MS);
        sc->costs.backward_weight_ps = (PpsimTime)(k[4] * PPSIM_PS_PER_MS);
        sc->costs.offload_ps = (PpsimTime)(k[5] * PPSIM_PS_PER_MS);
        sc->costs.p2p_ps = (PpsimTime)(k[6] * PPSIM_PS_PER_MS);
        sc->memory_limit_units = k[7];
        sc->memory_limit_set = k[7] > 0;
        PpsimSolverReport rep = {0};
        g_autoptr(GError) error = NULL;
        /* the proved cases get time to spare (a sanitizer build on a loaded machine is
         * several times slower); the last one stops at its limit */
        g_autoptr(PpsimRunResult) res =
            run_optpipe(sc, "auto", c + 1 < G_N_ELEMENTS(cases) ? "60" : "2", &rep, &error);
        ppsim_assert_no_error(error);
        ck_assert(!ppsim_run_result_any_oom(res));
        g_autoptr(PpsimRunResult) ada = ppsim_test_run_option(sc, "adaoffload", NULL, NULL, &error);
        ppsim_assert_no_error(error);
        ck_assert_int_le(res->makespan_ps, ada->makespan_ps);
        if (strcmp(rep.status, "optimal") != 0)
            continue;
        n_optimal++;
        ck_assert_msg(fabs(res->makespan_ps / (double)PPSIM_PS_PER_MS - rep.objective_ms) < 1e-6,
                      "case %u: replay %g, objective %g", c,
                      res->makespan_ps / (double)PPSIM_PS_PER_MS, rep.objective_ms);
        for (guint g = 0; g < ppsim_sched_registry_count(); g++) {
            const char *name = ppsim_sched_registry_nth(g)->name;
            if (strcmp(name, "optpipe") == 0)
                continue;
            g_autoptr(GError) e2 = NULL;
            g_autoptr(PpsimRunResult) other = ppsim_test_run_option(sc, name, NULL, NULL, &e2);
            if (other == NULL || ppsim_run_result_any_oom(other) || other->v != 1)
                continue;
            ck_assert_msg(res->makespan_ps <= other->makespan_ps, "case %u: %s is faster", c, name);
        }
    }
    ck_assert_int_ge(n_optimal, 6);
}
END_TEST

/* Solver and replay agree ([OP] App. C's memory rows against the replay's accounting): on a
 * grid of tiny instances with offload (p 2-4, m 2-4, activation limits 1-3 units, offload
 * costs 0.37-2 ms; the first three are the audit's reproductions, whose solver once said
 * "optimal" at 8, 16 and 12.1 ms while its schedule replayed at 10, 18 and 14), whenever the
 * status is "optimal" the objective is the replayed makespan; whatever the path, the
 * reported objective is that of the schedule returned (the replay's makespan, or no less
 * than it when the solver's incumbent is not proved); the schedule fits the limit. */
typedef struct {
    double v[4];
} AgreeCase;

START_TEST(test_milp_replay_agrees)
{
    if (!ppsim_milp_available())
        return;
    const double cases[][4] = {
        /* p, m, limit, offload */
        {2, 2, 1, 0.5},
        {4, 4, 3, 0.5},
        {3, 3, 2, 1.7},
    };
    const double offs[] = {0.37, 0.5, 1, 2};
    GArray *all = g_array_new(FALSE, FALSE, sizeof(AgreeCase));
    g_array_append_vals(all, cases, G_N_ELEMENTS(cases));
    for (int p = 2; p <= 4; p++)
        for (int m = 2; m <= 4; m++)
            for (int lim = 1; lim <= 3; lim++)
                for (guint o = 0; o < G_N_ELEMENTS(offs); o++) {
                    /* every (p, m, limit) once, the offload cost cycling through offs[] */
                    if ((guint)(p + m + lim) % G_N_ELEMENTS(offs) != o)
                        continue;
                    AgreeCase k = {{p, m, lim, offs[o]}};
                    g_array_append_val(all, k);
                }
    int n_optimal = 0;
    for (guint c = 0; c < all->len; c++) {
        const double *k = g_array_index(all, AgreeCase, c).v;
        g_autoptr(PpsimScenario) sc = ppsim_scenario_new_explicit((int)k[0], 1, (int)k[1], "x");
        sc->costs.forward_ps = sc->costs.backward_input_ps = sc->costs.backward_weight_ps =
            PPSIM_PS_PER_MS;
        sc->costs.offload_ps = (PpsimTime)(k[3] * PPSIM_PS_PER_MS);
        sc->memory_limit_units = k[2];
        sc->memory_limit_set = TRUE;
        const char *kv[] = {"time_limit", "8", "max_binaries", "100000", "cache_dir", "none", NULL};
        PpsimSolverReport rep = {0};
        g_autoptr(GError) error = NULL;
        g_autoptr(PpsimRunResult) res = run_optpipe_kv(sc, kv, &rep, &error);
        ppsim_assert_no_error(error);
        double replay = res->makespan_ps / (double)PPSIM_PS_PER_MS;
        ck_assert_msg(!ppsim_run_result_any_oom(res), "p %g m %g limit %g offload %g: OOM", k[0],
                      k[1], k[2], k[3]);
        if (strcmp(rep.status, "optimal") == 0) {
            n_optimal++;
            ck_assert_msg(
                fabs(replay - rep.objective_ms) < 1e-6,
                "p %g m %g limit %g offload %g: optimal objective %g, replay %g (path %s)", k[0],
                k[1], k[2], k[3], rep.objective_ms, replay, rep.path);
        } else if (strcmp(rep.path, "milp") == 0) {
            ck_assert_msg(replay <= rep.objective_ms + 1e-6, "objective %g, replay %g",
                          rep.objective_ms, replay);
        } else {
            ck_assert_str_eq(rep.status, "warm-start");
            ck_assert_msg(fabs(replay - rep.objective_ms) < 1e-6, "objective %g, replay %g",
                          rep.objective_ms, replay);
        }
    }
    ck_assert_int_ge(n_optimal, (int)all->len / 2);
    g_array_free(all, TRUE);
}
END_TEST

/* [OP] Eq. 3 (`objective: stage-span`): the longest device span, first op's start to last
 * op's end. When CBC proves it optimal the replayed span (max over devices of end -
 * first_start) equals the objective, and it is never longer than the span of the makespan
 * optimum (Eq. 4) of the same instance; p = 2, m = 4 without a limit: span 12 ms (device 0
 * starts at once, so the last device's warm-up offset is not in its span) against the
 * makespan optimum's 13. */
START_TEST(test_milp_stage_span)
{
    if (!ppsim_milp_available())
        return;
    const double cases[][4] = {
        /* p, m, limit (0: none), offload */
        {2, 4, 0, 0.5},
        {4, 4, 3, 1},
        {2, 3, 1, 0.5},
    };
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
        const double *k = cases[c];
        g_autoptr(PpsimScenario) sc = ppsim_scenario_new_explicit((int)k[0], 1, (int)k[1], "x");
        sc->costs.forward_ps = sc->costs.backward_input_ps = sc->costs.backward_weight_ps =
            PPSIM_PS_PER_MS;
        sc->costs.offload_ps = (PpsimTime)(k[3] * PPSIM_PS_PER_MS);
        sc->memory_limit_units = k[2];
        sc->memory_limit_set = k[2] > 0;
        double span[2];
        for (int eq3 = 0; eq3 < 2; eq3++) {
            const char *kv[] = {
                "time_limit", "30",   "max_binaries", "100000",
                "cache_dir",  "none", "objective",    eq3 ? "stage-span" : "makespan",
                NULL};
            PpsimSolverReport rep = {0};
            g_autoptr(GError) error = NULL;
            g_autoptr(PpsimRunResult) res = run_optpipe_kv(sc, kv, &rep, &error);
            ppsim_assert_no_error(error);
            ck_assert(!ppsim_run_result_any_oom(res));
            PpsimTime longest = 0;
            for (int d = 0; d < res->p; d++)
                longest = MAX(longest, res->devices[d].end_ps - res->devices[d].first_start_ps);
            span[eq3] = longest / (double)PPSIM_PS_PER_MS;
            ck_assert_str_eq(rep.status, "optimal");
            if (eq3)
                ck_assert_msg(fabs(span[1] - rep.objective_ms) < 1e-6,
                              "case %u: span objective %g, replayed span %g", c, rep.objective_ms,
                              span[1]);
        }
        ck_assert_msg(span[1] <= span[0] + 1e-9, "case %u: Eq. 3 span %g, Eq. 4's %g", c, span[1],
                      span[0]);
        if (c == 0)
            ck_assert(fabs(span[1] - 12) < 1e-9 && fabs(span[0] - 13) < 1e-9);
    }
}
END_TEST

/* Transfers of one direction by devices @a and @b (on the estimated timeline @st, @en of
 * @s) that overlap in time, counted. */
static int
switch_overlaps(const PpsimSchedule *s, const PpsimScheduleIndex *idx, const PpsimTime *st,
                const PpsimTime *en, int a, int b)
{
    int n = 0;
    guint32 ba = ppsim_schedule_index_base(idx, a, 1), bb = ppsim_schedule_index_base(idx, b, 1);
    for (guint i = 0; i < s->copy[a]->len; i++)
        for (guint k = 0; k < s->copy[b]->len; k++) {
            const PpsimOp *x = &g_array_index(s->copy[a], PpsimOp, i);
            const PpsimOp *y = &g_array_index(s->copy[b], PpsimOp, k);
            n += x->kind == y->kind && st[ba + i] < en[bb + k] && st[bb + k] < en[ba + i];
        }
    return n;
}

/* [OP] Eq. 18 on its own. Four devices, two per PCIe switch whose uplink they oversubscribe
 * (hand-made estimates: host links 0, 0, 1, 1, contended), F = B = W = 1 ms, a 1 ms one-way
 * transfer, 2 activations per device. With `shared_switch: ignore` the optimum has two
 * devices of one switch transferring in the same direction at the same time (more than the
 * uplink carries) on its timeline; with Eq. 18 (the default) CBC proves an optimum whose
 * timeline (its cross-device waits included) has no such overlap on either switch, lasts
 * exactly the objective and fits the limit. Fails if Eq. 18 is left out of the model: the
 * default run is then the ablation's. */
START_TEST(test_milp_shared_switch)
{
    const int p = 4, m = 4;
    PpsimStageEstimate st[4];
    for (int i = 0; i < p; i++)
        st[i] = (PpsimStageEstimate){.f_ps = PPSIM_PS_PER_MS,
                                     .b_ps = PPSIM_PS_PER_MS,
                                     .w_ps = PPSIM_PS_PER_MS,
                                     .off_ps = PPSIM_PS_PER_MS,
                                     .act = 1000,
                                     .act_w = 1000};
    int link[4] = {0, 0, 1, 1};
    PpsimCostEstimates c = {.n_stages = p,
                            .stage = st,
                            .mem_scale = 1000,
                            .n_devices = p,
                            .host_link = link,
                            .host_link_contended = TRUE};
    gint64 limit[4] = {2000, 2000, 2000, 2000};
    PpsimPipelineShape shape = {.p = p, .v = 1, .m = m};
    double objective[2];
    for (int with = 0; with < 2; with++) {
        PpsimOpMilpOptions o = {
            .solver = {.time_limit_s = 200, .threads = 1}, .offload = TRUE, .no_switch = !with};
        PpsimOpMilpSolve info = {0};
        g_autoptr(PpsimSchedule) s = NULL;
        g_autoptr(GError) error = NULL;
        ck_assert(ppsim_op_milp_solve(&shape, &c, limit, NULL, 0, &o, &s, &info, &error));
        ck_assert_str_eq(ppsim_milp_status_name(&info.milp), "optimal");
        objective[with] = info.milp.objective;
        ppsim_milp_result_clear(&info.milp);
        g_autoptr(PpsimScheduleIndex) idx = ppsim_schedule_index_new(s, &error);
        ppsim_assert_no_error(error);
        guint32 n = ppsim_schedule_index_n_ops(idx);
        g_autofree PpsimTime *t0 = g_new(PpsimTime, n + 1), *t1 = g_new(PpsimTime, n + 1);
        ck_assert(ppsim_schedule_estimate(s, idx, &c, t0, t1, NULL, &error));
        int overlaps =
            switch_overlaps(s, idx, t0, t1, 0, 1) + switch_overlaps(s, idx, t0, t1, 2, 3);
        if (!with) {
            ck_assert_msg(overlaps > 0, "without Eq. 18 no transfers overlap: the instance "
                                        "does not exercise the constraint");
            continue;
        }
        ck_assert_int_eq(overlaps, 0);
        PpsimOpEval ev;
        ck_assert(ppsim_op_eval(s, &c, limit, NULL, &ev, &error));
        ck_assert(ev.fits);
        ck_assert_msg(fabs(ev.makespan_ps / (double)PPSIM_PS_PER_MS - objective[1]) < 1e-6,
                      "timeline %g ms, objective %g ms", ev.makespan_ps / (double)PPSIM_PS_PER_MS,
                      objective[1]);
    }
    ck_assert(objective[1] >= objective[0] - 1e-6);
}
END_TEST

/* Same-direction transfers of devices @a and @b that overlap in the replay @res. */
static int
replay_overlaps(const PpsimRunResult *res, int a, int b)
{
    int n = 0;
    const PpsimSchedule *s = res->schedule;
    for (guint i = 0; i < s->copy[a]->len; i++)
        for (guint k = 0; k < s->copy[b]->len; k++) {
            const PpsimOpTiming *x = &g_array_index(res->copy_timing[a], PpsimOpTiming, i);
            const PpsimOpTiming *y = &g_array_index(res->copy_timing[b], PpsimOpTiming, k);
            n += g_array_index(s->copy[a], PpsimOp, i).kind ==
                     g_array_index(s->copy[b], PpsimOp, k).kind &&
                 x->start_ps < y->end_ps && y->start_ps < x->end_ps;
        }
    return n;
}

/* The 4-A100 instance of the two tests below (see the first for why these values). */
static const char *const shared_switch_ovr[] = {"model.layers=16",
                                                "model.vocab=8000",
                                                "training.pp=4",
                                                "training.chunks=1",
                                                "training.microbatches=8",
                                                "memory.limit=18.171875GiB",
                                                "training.main_grads=bf16",
                                                "memory.fragmentation=0",
                                                "memory.reserved=0B",
                                                NULL};

/* Eq. 18 in hardware mode, on the replay's link timeline: 4 A100s, two per PCIe switch (two
 * 25 GB/s links behind a 30 GB/s uplink), a 16-layer model of hidden 4096 with light
 * recompute and a small vocabulary (balanced stages) under 17.5 GiB for the allocator (bf16
 * gradients, no context or fragmentation, the 688 MiB of NCCL's pipeline group on top, as
 * before ppsim counted the framework's memory), so that the devices
 * offload; one branch-and-bound node, so that the node limit, not the clock, ends the
 * search. With Eq. 18 the replay never has a switch's two GPUs transferring in the same
 * direction at once, and it lasts exactly the objective; with `shared_switch: ignore` they
 * do, share the uplink, and the replay is slower than the objective. */
START_TEST(test_milp_shared_switch_replay)
{
    g_autoptr(PpsimScenario) sc =
        ppsim_test_load_scenario("scenarios/a100_offload_pcie.yaml", shared_switch_ovr);
    for (int with = 0; with < 2; with++) {
        const char *kv[] = {"time_limit", "200",  "node_limit",    "1",
                            "cache_dir",  "none", "shared_switch", with ? "auto" : "ignore",
                            NULL};
        PpsimSolverReport rep = {0};
        g_autoptr(GError) error = NULL;
        g_autoptr(PpsimRunResult) res = run_optpipe_kv(sc, kv, &rep, &error);
        ppsim_assert_no_error(error);
        ck_assert_str_eq(rep.path, "milp");
        ck_assert(!ppsim_run_result_any_oom(res));
        int overlaps = replay_overlaps(res, 0, 1) + replay_overlaps(res, 2, 3);
        double replay = res->makespan_ps / (double)PPSIM_PS_PER_MS;
        if (with) {
            ck_assert_int_eq(overlaps, 0);
            ck_assert_msg(fabs(replay - rep.objective_ms) < 1e-6 * replay,
                          "replay %.6f ms, objective %.6f ms", replay, rep.objective_ms);
        } else {
            ck_assert_int_gt(overlaps, 0);
            ck_assert_msg(replay > rep.objective_ms * 1.01, "replay %.6f ms, objective %.6f ms",
                          replay, rep.objective_ms);
        }
    }
}
END_TEST

/* The time limit is a hard wall-clock bound: at p = 8, m = 8 with offload under a 3-unit
 * limit CBC's root node alone runs for seconds (it checks its own limit only between nodes),
 * yet a 1 s limit reports the time limit (as the solver's status; the result's status is the
 * returned schedule's) with the LP relaxation's bound and keeps a schedule no slower than
 * AdaOffload. That it returns within 10% plus 50 ms is a benchmark (tools/bench --only
 * optpipe), not a unit test: a loaded machine would fail it. */
START_TEST(test_milp_hard_limit)
{
    g_autoptr(PpsimScenario) sc = ppsim_scenario_new_explicit(8, 1, 8, "x");
    sc->costs.forward_ps = sc->costs.backward_input_ps = sc->costs.backward_weight_ps =
        PPSIM_PS_PER_MS;
    sc->costs.offload_ps = PPSIM_PS_PER_MS / 2;
    sc->memory_limit_units = 3;
    sc->memory_limit_set = TRUE;
    PpsimSolverReport rep = {0};
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimRunResult) res = run_optpipe(sc, "auto", "1", &rep, &error);
    ppsim_assert_no_error(error);
    /* the solver stopped at its limit; what is returned is its incumbent or, when that is
     * not better, the warm start, and the status says which */
    ck_assert_str_eq(rep.milp_status, "time_limit");
    ck_assert(strcmp(rep.status, strcmp(rep.path, "milp") == 0 ? "time_limit" : "warm-start") == 0);
    ck_assert(!ppsim_run_result_any_oom(res));
    ck_assert_msg(!isnan(rep.bound_ms) && rep.bound_ms <= rep.objective_ms + 1e-9,
                  "bound %g objective %g", rep.bound_ms, rep.objective_ms);
    g_autoptr(PpsimRunResult) ada = ppsim_test_run_option(sc, "adaoffload", NULL, NULL, &error);
    ppsim_assert_no_error(error);
    ck_assert_int_le(res->makespan_ps, ada->makespan_ps);
}
END_TEST

/* The rolling path (`decompose: rolling`) at p = 8, m = 64 with offload, whose whole model
 * (113,408 binaries) is far above max_binaries: the windows ran (path rolling, the note counts
 * them, each far smaller than the whole), the schedule fits, the replay equals the reported
 * objective, the bound is the machine bound below it, and the schedule is no slower than the
 * warm start's (AdaOffload here; the windows' time limit may stop some, which changes
 * nothing of this). A smaller instance (p = 4, m = 16) does the same with `decompose: none`
 * for the heuristic path's report to compare with. */
START_TEST(test_milp_rolling)
{
    const int shapes[][3] = {{8, 64, 3}, {4, 16, 3}};
    for (guint c = 0; c < G_N_ELEMENTS(shapes); c++) {
        g_autoptr(PpsimScenario) sc =
            ppsim_scenario_new_explicit(shapes[c][0], 1, shapes[c][1], "x");
        sc->costs.forward_ps = PPSIM_PS_PER_MS;
        sc->costs.backward_input_ps = 13 * PPSIM_PS_PER_MS / 10;
        sc->costs.backward_weight_ps = 7 * PPSIM_PS_PER_MS / 10;
        sc->costs.offload_ps = 8 * PPSIM_PS_PER_MS / 10;
        sc->costs.p2p_ps = PPSIM_PS_PER_MS / 10;
        sc->memory_limit_units = shapes[c][2];
        sc->memory_limit_set = TRUE;
        const char *kv[] = {"decompose",  "rolling", "window",    "8",    "node_limit", "1",
                            "time_limit", "20",      "cache_dir", "none", NULL};
        PpsimSolverReport rep = {0};
        g_autoptr(GError) error = NULL;
        g_autoptr(PpsimRunResult) res = run_optpipe_kv(sc, kv, &rep, &error);
        ppsim_assert_no_error(error);
        ck_assert_str_eq(rep.path, "rolling");
        ck_assert_msg(strcmp(rep.status, "rolling") == 0 || strcmp(rep.status, "time_limit") == 0 ||
                          strcmp(rep.status, "optimal") == 0,
                      "status %s", rep.status);
        int n_win = 0, max_bin = 0, whole = 0;
        ck_assert_msg(sscanf(rep.note, "%d windows, <= %d binaries each (whole: %d)", &n_win,
                             &max_bin, &whole) == 3,
                      "note %s", rep.note);
        ck_assert_int_gt(n_win, 1);
        ck_assert_int_gt(max_bin, 0);
        ck_assert_int_lt(max_bin * 10, whole);
        ck_assert(!ppsim_run_result_any_oom(res));
        double replay = res->makespan_ps / (double)PPSIM_PS_PER_MS;
        ck_assert_msg(fabs(replay - rep.objective_ms) < 1e-6, "objective %g, replay %g",
                      rep.objective_ms, replay);
        ck_assert(rep.bound_ms <= rep.objective_ms + 1e-9 && rep.bound_ms > 0);
        ck_assert(fabs(rep.gap - (rep.objective_ms - rep.bound_ms) / rep.objective_ms) < 1e-9);
        /* the heuristic path: the warm start as it is */
        const char *kv0[] = {"decompose", "none", "cache_dir", "none", NULL};
        PpsimSolverReport rep0 = {0};
        g_autoptr(PpsimRunResult) warm = run_optpipe_kv(sc, kv0, &rep0, &error);
        ppsim_assert_no_error(error);
        ck_assert_str_eq(rep0.path, "heuristic");
        ck_assert_int_le(res->makespan_ps, warm->makespan_ps);
        ck_assert(fabs(rep0.bound_ms - rep.bound_ms) < 1e-9);
    }
}
END_TEST

/* The rolling path where it improves: the 4-A100 instance above (816 binaries) solved in
 * windows (`max_binaries: 10`, 20 nodes a window, so that node limits, not the clock, end
 * them). Windows beat the warm start (1248.0 against AdaOffload's 1359.1 ms when written),
 * the note counts the windows that did, Eq. 18 still holds in the replay (no same-direction
 * overlap on a switch) and the replay lasts exactly the objective. */
START_TEST(test_milp_rolling_improves)
{
    g_autoptr(PpsimScenario) sc =
        ppsim_test_load_scenario("scenarios/a100_offload_pcie.yaml", shared_switch_ovr);
    const char *kv[] = {"time_limit",   "300",     "node_limit", "20",
                        "max_binaries", "10",      "cache_dir",  "none",
                        "decompose",    "rolling", NULL};
    PpsimSolverReport rep = {0};
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimRunResult) res = run_optpipe_kv(sc, kv, &rep, &error);
    ppsim_assert_no_error(error);
    ck_assert_str_eq(rep.path, "rolling");
    ck_assert_str_eq(rep.status, "rolling");
    int n_win = 0, max_bin = 0, whole = 0, improved = 0;
    ck_assert_msg(sscanf(rep.note, "%d windows, <= %d binaries each (whole: %d); %d improved",
                         &n_win, &max_bin, &whole, &improved) == 4,
                  "note %s", rep.note);
    ck_assert_int_ge(improved, 1);
    ck_assert(!ppsim_run_result_any_oom(res));
    ck_assert_int_eq(replay_overlaps(res, 0, 1) + replay_overlaps(res, 2, 3), 0);
    double replay = res->makespan_ps / (double)PPSIM_PS_PER_MS;
    ck_assert_msg(fabs(replay - rep.objective_ms) < 1e-6 * replay,
                  "replay %.6f ms, objective %.6f ms", replay, rep.objective_ms);
    g_autoptr(PpsimRunResult) ada = ppsim_test_run_option(sc, "adaoffload", NULL, NULL, &error);
    ppsim_assert_no_error(error);
    ck_assert_msg(res->makespan_ps < ada->makespan_ps, "rolling %g ms, adaoffload %g ms", replay,
                  ada->makespan_ps / (double)PPSIM_PS_PER_MS);
}
END_TEST

Suite *
ppsim_test_suite(void)
{
    Suite *s = suite_create("optpipe-milp");
    TCase *tc = tcase_create("milp");
    tcase_set_timeout(tc, 420);
    ppsim_test_add_cbc(tc, test_milp_binding);
    ppsim_test_add_cbc(tc, test_milp_exhaustive);
    ppsim_test_add_cbc(tc, test_milp_beats_generators);
    ppsim_test_add_cbc(tc, test_milp_replay_agrees);
    ppsim_test_add_cbc(tc, test_milp_stage_span);
    ppsim_test_add_cbc(tc, test_milp_hard_limit);
    ppsim_test_add_cbc(tc, test_milp_shared_switch);
    ppsim_test_add_cbc(tc, test_milp_shared_switch_replay);
    ppsim_test_add_cbc(tc, test_milp_rolling);
    ppsim_test_add_cbc(tc, test_milp_rolling_improves);
    suite_add_tcase(s, tc);
    return s;
}
