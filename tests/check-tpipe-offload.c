/* check-tpipe-offload.c: T-Offload ([TP] §5, App. D) through the checker and the replay. In
 * explicit-cost mode under App. A's assumptions (T_unit = T_F = 1 ms, fused backward
 * T_B = 2 T_F, p2p 0): the two windows of App. D, Eq. (5)-(6) and (7)-(8), each with cases on
 * both sides of its inequality, and ppsim's own threshold for the optimizer step; in hardware
 * mode the static memory a step on a CPU worker frees, its D2H and Adam times (with tensor
 * parallelism: every GPU's share of the TP group), and the CSV round trip. */
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

/* Device @d's op of @kind on @stage for microbatch @mb (-1: per-stage), with its timing. */
static const PpsimOpTiming *
find_op(const PpsimRunResult *res, int d, int kind, int stage, int mb)
{
    for (int list = 0; list < 2; list++) {
        const GArray *ops = list == 0 ? res->schedule->compute[d] : res->schedule->copy[d];
        for (guint i = 0; i < ops->len; i++) {
            const PpsimOp *op = &g_array_index(ops, PpsimOp, i);
            if (op->kind == kind && op->stage == stage && op->microbatch == mb)
                return &g_array_index(list == 0 ? res->compute_timing[d] : res->copy_timing[d],
                                      PpsimOpTiming, i);
        }
    }
    ck_abort_msg("op not found");
    return NULL;
}

static PpsimRunResult *
offload_run(int p, int m, double offload_ms, double optimizer_ms, const char *bits)
{
    g_autoptr(PpsimScenario) sc = ppsim_scenario_new_explicit(p, 2, m, "tpipe");
    sc->costs.offload_ps = (PpsimTime)llround(offload_ms * PPSIM_PS_PER_MS);
    sc->costs.optimizer_ps = (PpsimTime)llround(optimizer_ms * PPSIM_PS_PER_MS);
    g_autoptr(PpsimScheduleSpec) spec = ppsim_schedule_spec_new("tpipe");
    PpsimOptionValue o = {g_strdup("offload_optimizer"), g_strdup("t-offload"), {1, 1}};
    g_array_append_val(spec->options, o);
    PpsimOptionValue b = {g_strdup("bits"), g_strdup(bits), {1, 1}};
    g_array_append_val(spec->options, b);
    g_autoptr(GError) error = NULL;
    PpsimRunResult *res = ppsim_sim_run_spec(sc, spec, 0, &error);
    ppsim_assert_no_error(error);
    return res;
}

/* Device 0's GPU idle time within [@t0, @t1). */
static PpsimTime
idle_between(const PpsimRunResult *res, PpsimTime t0, PpsimTime t1)
{
    PpsimTime busy = 0;
    const GArray *ops = res->schedule->compute[0];
    for (guint i = 0; i < ops->len; i++) {
        const PpsimOpTiming *t = &g_array_index(res->compute_timing[0], PpsimOpTiming, i);
        if (!(g_array_index(ops, PpsimOp, i).flags & PPSIM_OP_FLAG_CPU))
            busy += MAX(0, MIN(t->end_ps, t1) - MAX(t->start_ps, t0));
    }
    return (t1 - t0) - busy;
}

/* App. D Eq. (5)-(6): device 0's GPU idles (p - ceil((2p-3)/6) - 1) T_bwd/2p between its
 * last chunk-2 backward and its last chunk-1 backward (kb = ceil((2p-3)/6) chunk-1
 * backwards sit in that gap); T-Offload runs the deep stage's gradient D2H (1 T_unit here)
 * and CPU step from the first. Eq. (6) asks T_step (D2H + Adam) to fit in that idle time, as
 * [TP] §5 places T-Offload in bubbles only (no overlap with compute, for GPUs whose copies
 * take SMs). ppsim's copy engine and CPU workers do not slow the GPU, and nothing in the
 * iteration waits for the step (the deep chunk's new weights are next needed by the next
 * iteration's WRL, Eq. (8)); the iteration ends when every optimizer step has. So ppsim's
 * condition is T_step <= 2p T_unit, the time from device 0's last chunk-2 backward to the end
 * of its last chunk-1 backward (the gap plus the kb backwards in it plus the last one:
 * 2(p - kb - 1) + 2kb + 2), i.e. T_step/T_bwd <= p against Eq. (6)'s p - kb - 1. Pinned for
 * even and odd p, one case on each side of each threshold:
 *  - T_step = the Eq. (6) window: hides (Eq. (6) holds);
 *  - T_step = window + 1: Eq. (6) fails, the step still hides (it overlaps chunk-1 backwards);
 *  - T_step = 2p: hides, the step ends exactly with the last backward;
 *  - T_step = 2p + 1: the iteration is 1 T_unit longer, 2p of its 2p + 1 overlap. */
START_TEST(test_app_d_eq6)
{
    static const int ps[] = {3, 4, 5, 8, 13};
    for (guint i = 0; i < G_N_ELEMENTS(ps); i++) {
        int p = ps[i], m = 4 * p, kb = ceil6(2 * p - 3), window = 2 * (p - kb - 1);
        PpsimTime base = (PpsimTime)6 * (m + p - 1) * PPSIM_PS_PER_MS;
        const struct {
            int step, longer;
        } cases[] = {{window, 0}, {window + 1, 0}, {2 * p, 0}, {2 * p + 1, 1}};
        ck_assert_int_lt(window + 1, 2 * p);
        for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
            int step = cases[c].step;
            g_autoptr(PpsimRunResult) res = offload_run(p, m, 1, step - 1, "16");
            const PpsimOpTiming *last_b2 = find_op(res, 0, PPSIM_OP_BW, p, m - 1);
            const PpsimOpTiming *last_b1 = find_op(res, 0, PPSIM_OP_BW, 0, m - 1);
            const PpsimOpTiming *goff = find_op(res, 0, PPSIM_OP_GOFF, p, -1);
            const PpsimOpTiming *opt = find_op(res, 0, PPSIM_OP_OPT, p, -1);
            /* Eq. (5): the idle time of the gap; ppsim's window: 2p to the end */
            ck_assert_int_eq(idle_between(res, last_b2->end_ps, last_b1->start_ps),
                             window * PPSIM_PS_PER_MS);
            ck_assert_int_eq(last_b1->end_ps - last_b2->end_ps, 2 * p * PPSIM_PS_PER_MS);
            ck_assert_int_eq(goff->start_ps, last_b2->end_ps);
            ck_assert_int_eq(opt->start_ps, goff->end_ps);
            ck_assert_int_eq(opt->end_ps, last_b2->end_ps + step * PPSIM_PS_PER_MS);
            ck_assert_msg(res->makespan_ps - base == cases[c].longer * PPSIM_PS_PER_MS,
                          "p=%d T_step=%d: longer by %g ms", p, step,
                          (double)(res->makespan_ps - base) / PPSIM_PS_PER_MS);
            ck_assert_double_eq_tol(res->devices[0].optimizer_overlap,
                                    (double)MIN(step, 2 * p) / step, 1e-12);
        }
    }
}
END_TEST

/* App. D Eq. (7)-(8): device 0 runs kf + 1 chunk-1 forwards, then idles (p - ceil((p-3)/6)
 * - 1) T_fwd/2p until chunk 2's first forward is ready; the (quantized) weights of the deep
 * stage come back in that window, and chunk 2's first forward needs them. p = 8 (kf = 1): 6
 * T_unit. A 16-bit upload of 8 T_unit (the `offload` cost) overruns by 2, delaying F2(0) to 10
 * instead of 8; at 12 bits (6 T_unit) it just fits, at 8 bits (4 T_unit) it hides. */
START_TEST(test_app_d_eq8)
{
    int p = 8, m = 32, kf = ceil6(p - 3), window = p - kf - 1;
    ck_assert_int_eq(window, 6);
    static const struct {
        const char *bits;
        int f2_start;
    } cases[] = {{"8", 8}, {"12", 8}, {"14", 9}, {"16", 10}};
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
        g_autoptr(PpsimRunResult) res = offload_run(p, m, 8, 0, cases[c].bits);
        const PpsimOpTiming *wrl = find_op(res, 0, PPSIM_OP_WRL, p, -1);
        const PpsimOpTiming *f2 = find_op(res, 0, PPSIM_OP_F, p, 0);
        ck_assert_int_eq(wrl->start_ps, (PpsimTime)(kf + 1) * PPSIM_PS_PER_MS);
        if (cases[c].f2_start == p) /* the window: idle from the last F1 to F2(0) */
            ck_assert_int_eq(idle_between(res, wrl->start_ps, f2->start_ps),
                             window * PPSIM_PS_PER_MS);
        ck_assert_int_eq(f2->start_ps, (PpsimTime)cases[c].f2_start * PPSIM_PS_PER_MS);
    }
}
END_TEST

/* Hardware mode (DGX A100, p = 4, a small GPT): each device's deep stage keeps its 16-bit
 * gradients and its weights at `bits` on the GPU and frees the rest of its 16 bytes per
 * parameter ([ZERO] §3.1); the gradients cross PCIe at 25 GB/s alone on their link (2
 * bytes per parameter), and the node's 16 CPU workers split over its 4 steps, so each Adam
 * step takes params / (4 x adam_rate). */
START_TEST(test_t_offload_hardware)
{
    const char *yaml = "hardware: {preset: dgx-a100-80gb, pcie: {gpus_per_switch: 1}}\n"
                       "model: {layers: 16, hidden: 1024, heads: 16, seq_len: 1024, vocab: 32000}\n"
                       "training: {pp: 4, microbatches: 8}\n"
                       "schedule: {name: tpipe, offload_optimizer: t-offload, bits: 8}\n";
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc =
        ppsim_scenario_parse(yaml, strlen(yaml), "t.yaml", NULL, NULL, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimCosts) costs = ppsim_costs_new(sc, 8, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimRunResult) res =
        ppsim_sim_run_spec(sc, g_ptr_array_index(sc->schedules, 0), 0, &error);
    ppsim_assert_no_error(error);
    for (int d = 0; d < 4; d++) {
        const PpsimStageCost *st = &costs->stage[4 + d];
        /* the GPU keeps the fp32 gradients (4 bytes) and 8-bit weights (1) */
        gint64 saved = st->static_mem - (gint64)llround(st->params * 5.0);
        ck_assert_int_eq(res->devices[d].static_memory_saved, saved);
        /* static memory also holds memory.reserved and NCCL's buffers */
        ck_assert_int_eq(res->devices[d].static_memory,
                         costs->stage[d].static_mem + st->static_mem - saved + costs->memory_fixed);
        const PpsimOpTiming *opt = find_op(res, d, PPSIM_OP_OPT, 4 + d, -1);
        PpsimTime adam =
            ppsim_time_from_seconds(st->params / (4 * sc->hardware.host_adam_params_per_s));
        ck_assert_int_eq(opt->end_ps - opt->start_ps, adam);
        const PpsimOpTiming *goff = find_op(res, d, PPSIM_OP_GOFF, 4 + d, -1);
        double secs = (double)(goff->end_ps - goff->start_ps) / 1e12;
        ck_assert_double_eq_tol(secs, st->params * 2 / sc->hardware.pcie_bytes_per_s, 1e-5);
        ck_assert(res->devices[d].optimizer_overlap >= 0 && res->devices[d].optimizer_overlap <= 1);
    }
}
END_TEST

/* With tensor parallelism a pipeline device is a TP group: each GPU keeps its share of the
 * stage and moves it over its own PCIe link, but the node's CPU updates the shares of every
 * GPU of the group and its memory holds their states. tp = 2, pp = 2, one node of 4 GPUs
 * with 16 workers, one CPU step per pipeline device (8 workers each): the step takes
 * 2 x (one GPU's parameters) / (8 x adam_rate), and host memory holds 2 x (18 - 2) bytes per
 * GPU share of both deep stages; the GPU frees 18 - 4 - 2 of them (it keeps its fp32
 * gradients and 16-bit weights), as without TP. */
START_TEST(test_t_offload_tp)
{
    const char *yaml =
        "hardware: {preset: dgx-a100-80gb, gpus_per_node: 4, pcie: {gpus_per_switch: "
        "1}}\n"
        "model: {layers: 8, hidden: 1024, heads: 16, seq_len: 1024, vocab: 32000}\n"
        "parallel: {tp: 2, pp: 2}\n"
        "training: {microbatches: 4, chunks: 2}\n"
        "schedule: {name: tpipe, offload_optimizer: t-offload}\n";
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc =
        ppsim_scenario_parse(yaml, strlen(yaml), "t.yaml", NULL, NULL, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimCosts) costs = ppsim_costs_new(sc, 4, &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimRunResult) res =
        ppsim_sim_run_spec(sc, g_ptr_array_index(sc->schedules, 0), 0, &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(res->n_hosts, 1);
    gint64 host = 0;
    for (int d = 0; d < 2; d++) {
        const PpsimStageCost *st = &costs->stage[2 + d];
        ck_assert_int_eq(res->devices[d].static_memory_saved,
                         st->static_mem - (gint64)llround(st->params * 6.0));
        const PpsimOpTiming *opt = find_op(res, d, PPSIM_OP_OPT, 2 + d, -1);
        PpsimTime adam =
            ppsim_time_from_seconds(st->params * 2 / (8 * sc->hardware.host_adam_params_per_s));
        ck_assert_int_eq(opt->end_ps - opt->start_ps, adam);
        host += 2 * (st->static_mem - (gint64)llround(st->params * 2.0));
    }
    ck_assert_int_eq(res->hosts[0].peak_memory, host);
}
END_TEST

/* T-Offload's ops survive the CSV: `<s>SC`, `<s>LW%bits@k`, `<s>OG@k`, and the replay of
 * the file equals the generator's. */
START_TEST(test_t_offload_csv)
{
    g_autoptr(PpsimRunResult) res = offload_run(4, 8, 1, 3, "8");
    g_autoptr(GString) csv = ppsim_schedule_to_csv(res->schedule);
    ck_assert_ptr_nonnull(strstr(csv->str, ",4SC,|,4LW%8@1,4OG@"));
    g_autoptr(GError) error = NULL;
    PpsimSchedule *back = ppsim_schedule_from_csv(csv->str, csv->len, "x.csv", &error);
    ppsim_assert_no_error(error);
    g_autoptr(GString) again = ppsim_schedule_to_csv(back);
    ck_assert_str_eq(csv->str, again->str);
    g_autoptr(PpsimScenario) sc = ppsim_scenario_new_explicit(4, 2, 8, "tpipe");
    sc->costs.offload_ps = PPSIM_PS_PER_MS;
    sc->costs.optimizer_ps = 3 * PPSIM_PS_PER_MS;
    g_autoptr(PpsimCosts) costs = ppsim_costs_new(sc, 8, &error);
    g_autoptr(PpsimRunResult) replay = ppsim_sim_replay(sc, costs, back, "x", "custom", 0, &error);
    ppsim_assert_no_error(error);
    ck_assert_int_eq(replay->makespan_ps, res->makespan_ps);
    for (int d = 0; d < 4; d++)
        ck_assert_double_eq(replay->devices[d].optimizer_overlap,
                            res->devices[d].optimizer_overlap);
    g_autoptr(PpsimSchedule) bad = ppsim_schedule_from_csv("0F0,0B0,|,0LW3\n", 15, "x.csv", &error);
    ck_assert_ptr_null(bad);
    ppsim_assert_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_PARSE);
}
END_TEST

Suite *
ppsim_test_suite(void)
{
    Suite *s = suite_create("tpipe-offload");
    TCase *tc = tcase_create("app-d");
    tcase_add_test(tc, test_app_d_eq6);
    tcase_add_test(tc, test_app_d_eq8);
    suite_add_tcase(s, tc);
    tc = tcase_create("hardware");
    tcase_add_test(tc, test_t_offload_hardware);
    tcase_add_test(tc, test_t_offload_tp);
    tcase_add_test(tc, test_t_offload_csv);
    suite_add_tcase(s, tc);
    return s;
}
