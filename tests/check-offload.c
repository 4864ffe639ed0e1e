/* check-offload.c: PipeOffload ([PO]) — the uniform repeating strategy against the
 * interleaving one, the selective-offload memory curve (§2, Fig. 2-3), Table 1's claims for
 * PO-H / PO-F, the offload ratio k in explicit and hardware mode, and the `offload` option. */
#include "ppsim-test.h"
#include "cost/cost-model.h"
#include "scenario/scenario.h"
#include "sched/offload/stream-plan.h"
#include "schedule/schedule.h"
#include "sim/sim.h"
#include "util/ppsim-error.h"

#include <string.h>

#define UNIT PPSIM_EXPLICIT_MEM_SCALE

/* Runs the one schedule of a YAML scenario given as text (with --set style overrides). */
static PpsimRunResult *
run_yaml(const char *yaml, const char *const *overrides, GError **error)
{
    g_autoptr(PpsimScenario) sc =
        ppsim_scenario_parse(yaml, strlen(yaml), "test.yaml", NULL, overrides, error);
    if (sc == NULL)
        return NULL;
    return ppsim_sim_run_spec(sc, g_ptr_array_index(sc->schedules, 0), 0, error);
}

/* Explicit mode, F = B = W = 1 ms, p2p 0, one-way offload @off ms: @schedule (YAML). */
static PpsimRunResult *
run_explicit(int p, int v, int m, double off, const char *schedule)
{
    g_autofree char *yaml =
        g_strdup_printf("name: t\ntraining: {pp: %d, chunks: %d, microbatches: %d}\n"
                        "schedule: %s\ncosts: {forward: 1, backward_input: 1, "
                        "backward_weight: 1, p2p: 0, offload: %g}\n",
                        p, v, m, schedule, off);
    g_autoptr(GError) error = NULL;
    PpsimRunResult *res = run_yaml(yaml, NULL, &error);
    ppsim_assert_no_error(error);
    return res;
}

static gint64
peak0(const PpsimRunResult *res)
{
    return res->devices[0].peak_activation / UNIT;
}

/* The building block by hand (p = 2, v = 1, T = 3): F0@0 F1@1 B1@2 W1@3; B0 is ready at 3
 * but 3 mod 3 meets F0's slot, so B0@4, W0@5. Repeated every 3 ms, device 0 runs F F B W B W
 * and device 1 F B W F B W; the replay squeezes device 0's second B to 6 (its input, B1 of
 * microbatch 1, ends at 6): makespan 8, one less than 1F1B's (m + p - 1) 3 = 9. */
START_TEST(test_uniform_block_by_hand)
{
    g_autoptr(PpsimRunResult) r = run_explicit(2, 1, 2, 0, "{name: pipeoffload, offload: none}");
    g_autoptr(GString) csv = ppsim_schedule_to_csv(r->schedule);
    ck_assert_str_eq(csv->str, "0F0,0F1,0I0,0W0,0I1,0W1\n1F0,1I0,1W0,1F1,1I1,1W1\n");
    ck_assert_int_eq(r->makespan_ps, 8 * PPSIM_PS_PER_MS);
    ck_assert_int_eq(peak0(r), 2);
}
END_TEST

/* [PO] §2, Fig. 2-3 (d = 8, v = 16, one chunk-activation per stage): offloading the n
 * longest-lived stages of each device. The interleaving strategy (GIS) falls exactly
 * linearly, d v - n d; the uniform repeat starts near GIS-H's peak g(v-1) + d ("similar peak
 * memory", §3.2) and falls faster than linearly: half the stages offloaded leave about a
 * quarter (§2: "approximately one-quarter"; here 20 of 67 chunks), and for every budget it
 * is below interleaving while anything stays on the device. */
START_TEST(test_memory_curve)
{
    const int d = 8, v = 16, m = 32;
    gint64 uni0 = 0;
    for (int n = 0; n <= v; n++) {
        g_autofree char *u = g_strdup_printf("{name: pipeoffload, offload: %d}", n);
        g_autofree char *i =
            g_strdup_printf("{name: pipeoffload, offload: %d, strategy: interleaved}", n);
        g_autoptr(PpsimRunResult) ru = run_explicit(d, v, m, 0.25, u);
        g_autoptr(PpsimRunResult) ri = run_explicit(d, v, m, 0.25, i);
        gint64 pu = peak0(ru), pi = peak0(ri);
        if (n < v)
            ck_assert_int_eq(pi, (gint64)d * v - (gint64)n * d); /* linear */
        if (n == 0) {
            uni0 = pu;
            ck_assert_int_le(pu, d / 2 * (v - 1) + d); /* GIS-H's peak */
            continue;
        }
        if (n < v) /* with everything offloaded both keep only a few chunks in flight */
            ck_assert_msg(pu < pi, "n = %d: uniform %ld, interleaved %ld", n, (long)pu, (long)pi);
        /* better than linear, below uni0 (1 - n/v), until the last stages, where what is
         * in flight around the transfers (a few chunks, [PO] §5.2) is all that is left */
        if (n <= v - 2)
            ck_assert_msg(pu * v < uni0 * (v - n), "n = %d: %ld of %ld", n, (long)pu, (long)uni0);
        if (n == v / 2)
            ck_assert_msg(pu * 10 <= uni0 * 3, "half offloaded: %ld of %ld", (long)pu, (long)uni0);
    }
}
END_TEST

/* [PO] Table 1 and §5 in explicit mode (F = B = W = 1, one-way offload 0.25 ms, so
 * k = 0.5 / 3): PO-H's peak is at most a quarter of interleaved 1F1B's ((v-1)d + 2d - 1
 * chunks), PO-F's stays a small constant (§5.3: "approximately 4" layers) whatever v; both
 * bubbles lie between GIS's (d-1)(T_F+T_B) and 1F1B's v(d-1)(T_F+T_B+T_W) ("slightly
 * reduced throughput compared to GIS ... still surpass 1F1B"), and offloading costs no time:
 * PO-F runs exactly as long as the same schedule without offload. */
START_TEST(test_table1_claims)
{
    const int d = 8, m = 32;
    for (int v = 2; v <= 16; v *= 2) {
        g_autoptr(PpsimRunResult) none =
            run_explicit(d, v, m, 0.25, "{name: pipeoffload, offload: none}");
        g_autoptr(PpsimRunResult) h = run_explicit(d, v, m, 0.25, "po-h");
        g_autoptr(PpsimRunResult) f = run_explicit(d, v, m, 0.25, "po-f");
        ck_assert_int_le(peak0(h) * 4, (v - 1) * d + 2 * d - 1);
        ck_assert_int_le(ppsim_run_result_max_peak_activation(f) / UNIT, 5);
        ck_assert_int_eq(f->makespan_ps, none->makespan_ps);
        PpsimTime work = (PpsimTime)m * v * 3 * PPSIM_PS_PER_MS;
        PpsimTime bubble = h->makespan_ps - work;
        ck_assert_int_gt(bubble, (PpsimTime)(d - 1) * 2 * PPSIM_PS_PER_MS);
        ck_assert_int_lt(bubble, (PpsimTime)v * (d - 1) * 3 * PPSIM_PS_PER_MS);
        for (int dev = 0; dev < d; dev++)
            ck_assert_int_gt(f->schedule->copy[dev]->len, 0);
    }
}
END_TEST

/* [PO] Formula 1 in explicit mode: per chunk and microbatch the round trip 2 x offload
 * against F + B + W = 3 ms. With k = 0.5 PO-F is free; from k = 1 on the copy stream cannot
 * keep up and the makespan grows with k. */
START_TEST(test_k_slowdown)
{
    g_autoptr(PpsimRunResult) none =
        run_explicit(8, 4, 32, 0, "{name: pipeoffload, offload: none}");
    g_autoptr(PpsimRunResult) free_f = run_explicit(8, 4, 32, 0.75, "po-f");
    ck_assert_int_eq(free_f->makespan_ps, none->makespan_ps);
    PpsimTime last = none->makespan_ps;
    const double offs[] = {1.5, 2.25, 3.0, 4.5}; /* k = 1, 1.5, 2, 3 */
    for (guint i = 0; i < G_N_ELEMENTS(offs); i++) {
        g_autoptr(PpsimRunResult) r = run_explicit(8, 4, 32, offs[i], "po-f");
        ck_assert_int_gt(r->makespan_ps, last);
        last = r->makespan_ps;
    }
}
END_TEST

/* `offload` as a list of global stages: only those get copy ops; bad lists are refused. */
START_TEST(test_offload_list)
{
    g_autoptr(PpsimRunResult) r =
        run_explicit(4, 4, 8, 0.25, "{name: pipeoffload, offload: \"0,5\"}");
    for (int d = 0; d < 4; d++) {
        GArray *copy = r->schedule->copy[d];
        for (guint i = 0; i < copy->len; i++) {
            int s = g_array_index(copy, PpsimOp, i).stage;
            ck_assert_msg(s == 0 || s == 5, "stage %d offloaded", s);
        }
    }
    ck_assert_int_gt(r->schedule->copy[0]->len, 0);
    ck_assert_int_gt(r->schedule->copy[1]->len, 0);
    ck_assert_int_eq(r->schedule->copy[2]->len, 0);
    const char *bad[] = {"\"0,16\"", "\"0,x\"", "17", "sometimes"};
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *yaml =
            g_strdup_printf("name: t\ntraining: {pp: 4, chunks: 4, microbatches: 8}\n"
                            "schedule: {name: pipeoffload, offload: %s}\ncosts: {forward: 1}\n",
                            bad[i]);
        g_autoptr(GError) error = NULL;
        g_autoptr(PpsimRunResult) none = run_yaml(yaml, NULL, &error);
        ck_assert_ptr_null(none);
        ppsim_assert_error(error, PPSIM_SCHED_ERROR, PPSIM_SCHED_ERROR_UNSUPPORTED);
        ck_assert_ptr_nonnull(strstr(error->message, "'offload'"));
    }
}
END_TEST

/* Hardware mode, scenarios/a100_offload_k.yaml (h = 8192, recompute: light, so 20 sbh per
 * layer as [PO] App. C): k = 0.47, and PO-F adds under 1% to the same schedule without
 * offload (here nothing at all) while cutting the peak activation by more than 3x. Lowering
 * the PCIe bandwidth raises k past 1, and the slowdown appears and grows with k. */
START_TEST(test_k_hardware)
{
    const char *bws[] = {NULL, "hardware.pcie.bandwidth=8GB/s", "hardware.pcie.bandwidth=5GB/s"};
    double last_slowdown = -1;
    for (guint i = 0; i < G_N_ELEMENTS(bws); i++) {
        const char *ovr[] = {bws[i], NULL};
        g_autoptr(GError) error = NULL;
        g_autoptr(PpsimScenario) sc =
            ppsim_test_load_scenario("scenarios/a100_offload_k.yaml", bws[i] ? ovr : NULL);
        g_autoptr(GPtrArray) rs = ppsim_sim_run_all(sc, 0, &error);
        ppsim_assert_no_error(error);
        ck_assert_uint_eq(rs->len, 3); /* none, po-h, po-f */
        PpsimRunResult *none = g_ptr_array_index(rs, 0), *f = g_ptr_array_index(rs, 2);
        double slowdown = (double)f->makespan_ps / (double)none->makespan_ps - 1;
        if (i == 0) {
            ck_assert_double_eq_tol(f->offload_ratio_k, 0.47, 0.005);
            ck_assert_double_eq_tol(f->offload_ratio_k_scenario, f->offload_ratio_k, 1e-9);
            ck_assert_double_lt(slowdown, 0.01);
            /* more than 3x: the switch's GPUs stagger their transfers, which holds some
             * activations longer than offloading right after F would */
            ck_assert_int_lt(ppsim_run_result_max_peak_activation(f) * 3,
                             ppsim_run_result_max_peak_activation(none));
        } else {
            ck_assert_double_gt(f->offload_ratio_k, 1.0);
            ck_assert_double_gt(slowdown, last_slowdown + 0.01);
        }
        last_slowdown = slowdown;
    }
}
END_TEST

/* Replays CSV @text on an explicit scenario (F = B = W = 1 ms, p2p 0, offload @off ms). */
static PpsimRunResult *
replay_csv(int p, double off, const char *text)
{
    g_autofree char *yaml = g_strdup_printf("name: t\ntraining: {pp: %d, microbatches: 1}\n"
                                            "schedule: 1f1b\ncosts: {forward: 1, "
                                            "backward_input: 1, backward_weight: 1, p2p: 0, "
                                            "offload: %g}\n",
                                            p, off);
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc =
        ppsim_scenario_parse(yaml, strlen(yaml), "test.yaml", NULL, NULL, &error);
    ppsim_assert_no_error(error);
    PpsimSchedule *sched = ppsim_schedule_from_csv(text, strlen(text), "t.csv", &error);
    ppsim_assert_no_error(error);
    g_autoptr(PpsimCosts) costs = ppsim_costs_new(sc, sched->n_stages, &error);
    ppsim_assert_no_error(error);
    PpsimRunResult *res = ppsim_sim_replay(sc, costs, sched, "csv", "custom", 0, &error);
    ppsim_assert_no_error(error);
    return res;
}

/* A cross-device wait by hand (p = 2, m = 1, every op 1 ms). Device 0: F0 [0,1], OFF [1,2],
 * RL [2,3]. Device 1: F1 [1,2]; its OFF waits for device 0's RL (^0.1), so [3,4], RL [4,5],
 * B1 [5,6], W1 [6,7]; B0 (needs B1) [6,7], W0 [7,8]: makespan 8. Without the wait device 1's
 * OFF starts at 2 and everything after it one earlier: 7. */
START_TEST(test_copy_sync_by_hand)
{
    g_autoptr(PpsimRunResult) synced =
        replay_csv(2, 1, "0F0,0I0,0W0,|,0O0,0L0\n1F0,1I0,1W0,|,1O0^0.1,1L0\n");
    ck_assert_int_eq(synced->makespan_ps, 8 * PPSIM_PS_PER_MS);
    ck_assert_int_eq(g_array_index(synced->copy_timing[1], PpsimOpTiming, 0).start_ps,
                     3 * PPSIM_PS_PER_MS);
    g_autoptr(PpsimRunResult) free_ =
        replay_csv(2, 1, "0F0,0I0,0W0,|,0O0,0L0\n1F0,1I0,1W0,|,1O0,1L0\n");
    ck_assert_int_eq(free_->makespan_ps, 7 * PPSIM_PS_PER_MS);
}
END_TEST

/* Whether devices @a and @b ran transfers that overlap in time, of the same direction
 * (@same) or of opposite ones. */
static gboolean
transfers_overlap(const PpsimRunResult *r, int a, int b, gboolean same)
{
    const PpsimSchedule *s = r->schedule;
    for (guint i = 0; i < s->copy[a]->len; i++)
        for (guint j = 0; j < s->copy[b]->len; j++) {
            const PpsimOpTiming *x = &g_array_index(r->copy_timing[a], PpsimOpTiming, i);
            const PpsimOpTiming *y = &g_array_index(r->copy_timing[b], PpsimOpTiming, j);
            gboolean same_dir = g_array_index(s->copy[a], PpsimOp, i).kind ==
                                g_array_index(s->copy[b], PpsimOp, j).kind;
            if (same_dir == same && x->start_ps < y->end_ps && y->start_ps < x->end_ps)
                return TRUE;
        }
    return FALSE;
}

/* [PO] App. D co-schedules in explicit mode (d = 4, v = 4, PO-F, one-way offload F/2; no
 * links, so the sync modes pair devices 2k and 2k+1). Sync-interleaved: partners never run two
 * transfers of one direction at once, but do overlap an offload with a reload; sync-parallel: never
 * opposite directions at once; independent: no waits at all, and here partners do collide in one
 * direction. The waits survive the CSV round trip and replay the same. */
START_TEST(test_co_schedule_rounds)
{
    const char *modes[] = {"independent", "sync-interleaved", "sync-parallel", "auto"};
    for (guint i = 0; i < G_N_ELEMENTS(modes); i++) {
        g_autofree char *sched = g_strdup_printf("{name: po-f, co_schedule: %s}", modes[i]);
        g_autoptr(PpsimRunResult) r = run_explicit(4, 4, 8, 0.5, sched);
        g_autoptr(GError) error = NULL;
        ck_assert(ppsim_schedule_validate(r->schedule, &error));
        guint waits = 0;
        for (int d = 0; d < 4; d++)
            waits += r->schedule->copy_sync[d]->len;
        gboolean indep = i == 0 || i == 3; /* auto: no links in explicit mode */
        ck_assert_msg(indep == (waits == 0), "%s: %u waits", modes[i], waits);
        for (int pair = 0; pair < 4; pair += 2) {
            gboolean same = transfers_overlap(r, pair, pair + 1, TRUE);
            gboolean opposite = transfers_overlap(r, pair, pair + 1, FALSE);
            if (i == 0)
                ck_assert(same);
            else if (i == 1)
                ck_assert(!same && opposite);
            else if (i == 2)
                ck_assert(!opposite);
        }
        g_autoptr(GString) csv = ppsim_schedule_to_csv(r->schedule);
        if (!indep)
            ck_assert(strchr(csv->str, '^') != NULL);
        g_autoptr(PpsimRunResult) again = replay_csv(4, 0.5, csv->str);
        ck_assert_int_eq(again->makespan_ps, r->makespan_ps);
    }
}
END_TEST

/* The value of choice @key of @r, or NULL. */
static const char *
choice_of(const PpsimRunResult *r, const char *key)
{
    for (guint i = 0; r->choices != NULL && i < r->choices->len; i++)
        if (strcmp(g_array_index(r->choices, PpsimChoice, i).key, key) == 0)
            return g_array_index(r->choices, PpsimChoice, i).value;
    return NULL;
}

/* `co_schedule: auto` on a contended switch replays the three co-schedules and keeps the
 * fastest that fits, and says which: on scenario @path (with @override, nullable), @sched's
 * auto run equals the explicit run of the mode it names, which fits, and no fitting explicit
 * mode is faster. Returns the chosen mode (static). */
static const char *
check_auto_is_best(const char *path, const char *override, const char *sched)
{
    static const char *const modes[] = {"sync-interleaved", "independent", "sync-parallel"};
    const char *ovr[] = {override, NULL};
    g_autoptr(PpsimScenario) sc = ppsim_test_load_scenario(path, override ? ovr : NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimRunResult) a = ppsim_test_run_option(sc, sched, NULL, NULL, &error);
    ppsim_assert_no_error(error);
    const char *chosen = choice_of(a, "co_schedule");
    ck_assert_ptr_nonnull(chosen);
    const char *found = NULL;
    for (guint i = 0; i < G_N_ELEMENTS(modes); i++) {
        g_autoptr(PpsimRunResult) r =
            ppsim_test_run_option(sc, sched, "co_schedule", modes[i], &error);
        ppsim_assert_no_error(error);
        if (strcmp(modes[i], chosen) == 0) {
            found = modes[i];
            ck_assert_int_eq(a->makespan_ps, r->makespan_ps);
            ck_assert(!ppsim_run_result_any_oom(r));
        } else if (ppsim_run_result_fits(r)) { /* a "tight" verdict does not fit */
            ck_assert_int_le(a->makespan_ps, r->makespan_ps);
        }
    }
    ck_assert_ptr_nonnull(found);
    return found;
}

/* The defaults a user can trust: on a100_8gpu, auto makes PO-H sync-interleaved (the replays
 * pick it) and PO-F whichever plan replays fastest (sync-interleaved and independent are within
 * a microsecond there: check_auto_is_best checks the choice); on the PCIe scenario PO-F's fastest
 * plan (sync-interleaved) must give way to independent under a limit between the two plans' peaks
 * (with the framework's memory: fp32 gradients, CUDA context, NCCL, fragmentation). */
START_TEST(test_co_schedule_auto_replays)
{
    ck_assert_str_eq(check_auto_is_best("scenarios/a100_8gpu.yaml", NULL, "po-h"),
                     "sync-interleaved");
    ck_assert_str_ne(check_auto_is_best("scenarios/a100_8gpu.yaml", NULL, "po-f"), "sync-parallel");
    ck_assert_str_eq(check_auto_is_best("scenarios/a100_offload_pcie.yaml", NULL, "po-f"),
                     "sync-interleaved");
    ck_assert_str_eq(
        check_auto_is_best("scenarios/a100_offload_pcie.yaml", "memory.limit=21.6GiB", "po-f"),
        "independent");
    /* explicit mode has no links: auto is independent, by rule, and says so */
    g_autoptr(PpsimRunResult) r = run_explicit(4, 2, 8, 0.5, "po-h");
    ck_assert_str_eq(choice_of(r, "co_schedule"), "independent");
}
END_TEST

/* Runs scenarios/a100_offload_pcie.yaml (h = 4096, k = 0.87 for one GPU alone on its link)
 * with @override (nullable): makespans of [none, PO-H, PO-F][independent, sync-parallel,
 * sync-interleaved] (none in column 0 only). */
static void
run_pcie(const char *override, PpsimTime ms[3][3])
{
    const char *ovr[] = {override, NULL};
    g_autoptr(PpsimScenario) sc =
        ppsim_test_load_scenario("scenarios/a100_offload_pcie.yaml", override ? ovr : NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(GPtrArray) rs = ppsim_sim_run_all(sc, 0, &error);
    ppsim_assert_no_error(error);
    ck_assert_uint_eq(rs->len, 7);
    for (guint i = 0; i < rs->len; i++) {
        const PpsimRunResult *r = g_ptr_array_index(rs, i);
        if (i == 0)
            ms[0][0] = r->makespan_ps;
        else
            ms[1 + (i - 1) / 3][(i - 1) % 3] = r->makespan_ps;
    }
}

/* [PO] App. D on DGX A100 (2 GPUs per switch, 25 GB/s links, 30 GB/s uplink):
 *   - with independent links (gpus_per_switch: 1) PO-H and PO-F cost nothing (k <= 1);
 *   - on the shared switches, naive parallel transfers (independent) make PO-H and PO-F
 *     slower than that, and PO-F is slower whatever the co-schedule;
 *   - the synchronized-interleaved co-schedule beats independent and sync-parallel
 *     transfers for both, and never puts two transfers on one uplink direction, so its
 *     makespan does not move when the switch's shared efficiency drops, while the others
 *     slow down;
 *   - `auto` is sync-interleaved there, and independent where two GPU links cannot fill the
 *     uplink (12 GB/s links) or no GPU shares a switch. */
START_TEST(test_co_schedule_hardware)
{
    PpsimTime solo[3][3], shared[3][3], lossy[3][3];
    run_pcie("hardware.pcie.gpus_per_switch=1", solo);
    run_pcie(NULL, shared);
    run_pcie("hardware.pcie.shared_efficiency=0.6", lossy);
    ck_assert_int_eq(shared[0][0], solo[0][0]);
    for (int s = 1; s <= 2; s++) {
        for (int k = 0; k < 3; k++)
            ck_assert_int_eq(solo[s][k], solo[0][0]);
        ck_assert_int_gt(shared[s][0], solo[0][0]);
        ck_assert_int_lt(shared[s][2], shared[s][0]);
        ck_assert_int_lt(shared[s][2], shared[s][1]);
        ck_assert_int_eq(lossy[s][2], shared[s][2]);
        ck_assert_int_gt(lossy[s][0], shared[s][0]);
        ck_assert_int_gt(lossy[s][1], shared[s][1]);
    }
    ck_assert_int_gt(shared[2][2], solo[0][0]);

    const char *cases[] = {NULL, "hardware.pcie.bandwidth=12GB/s",
                           "hardware.pcie.gpus_per_switch=1"};
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        const char *ovr[] = {cases[i], NULL};
        g_autoptr(PpsimScenario) sc =
            ppsim_test_load_scenario("scenarios/a100_offload_pcie.yaml", cases[i] ? ovr : NULL);
        g_autoptr(GError) error = NULL;
        g_autoptr(PpsimRunResult) a = ppsim_test_run_option(sc, "po-h", NULL, NULL, &error);
        ppsim_assert_no_error(error);
        guint waits = 0;
        for (int d = 0; d < a->p; d++)
            waits += a->schedule->copy_sync[d]->len;
        ck_assert_msg((i == 0) == (waits > 0), "%s: %u waits", cases[i], waits);
        if (i > 0)
            continue;
        ck_assert_int_eq(a->makespan_ps, shared[1][2]);
        g_autoptr(PpsimRunResult) bad =
            ppsim_test_run_option(sc, "po-h", "co_schedule", "lockstep", &error);
        ck_assert_ptr_null(bad);
        ck_assert(strstr(error->message, "'co_schedule' must be auto, independent") != NULL);
    }
}
END_TEST

/* [PO] App. C: recompute: light stores 20 sbh per layer instead of 34 sbh (FlashAttention,
 * g = a, f = 4h); k for the bytes stored then equals Formula 1. */
START_TEST(test_light_recompute_bytes)
{
    PpsimModel model = {.layers = 1,
                        .hidden = 4096,
                        .ffn_hidden = 16384,
                        .heads = 32,
                        .kv_heads = 32,
                        .seq_len = 4096,
                        .vocab = 1,
                        .flash_attention = TRUE,
                        .recompute = PPSIM_RECOMPUTE_NONE};
    double sbh = 4096.0 * 4096.0;
    ck_assert_double_eq(ppsim_cost_layer_act_bytes(&model, 1), 34 * sbh);
    model.recompute = PPSIM_RECOMPUTE_LIGHT;
    ck_assert_double_eq(ppsim_cost_layer_act_bytes(&model, 1), 20 * sbh);
    ck_assert_double_eq(ppsim_cost_layer_act_w_bytes(&model, 1), 20 * sbh);
}
END_TEST

/* The copy-slot planner's interval set answers exactly as the plain scans over a sorted
 * list that it replaced (including overlapping and empty intervals). */
typedef struct {
    GArray *iv; /* PpsimTime pairs: start, end; sorted by start, new before equal */
} ScanPlan;

static void
scan_take(ScanPlan *pl, PpsimTime start, PpsimTime end)
{
    guint i = 0;
    while (i < pl->iv->len && g_array_index(pl->iv, PpsimTime, i) < start)
        i += 2;
    PpsimTime v[2] = {start, end};
    g_array_insert_vals(pl->iv, i, v, 2);
}

static PpsimTime
scan_earliest(const ScanPlan *pl, PpsimTime t, PpsimTime len)
{
    for (guint i = 0; i < pl->iv->len; i += 2) {
        PpsimTime a = g_array_index(pl->iv, PpsimTime, i),
                  b = g_array_index(pl->iv, PpsimTime, i + 1);
        if (b <= t)
            continue;
        if (a >= t + len)
            break;
        t = b;
    }
    return t;
}

static PpsimTime
scan_latest(const ScanPlan *pl, PpsimTime lo, PpsimTime end, PpsimTime len)
{
    PpsimTime t_end = end;
    for (guint i = pl->iv->len; i >= 2; i -= 2) {
        PpsimTime a = g_array_index(pl->iv, PpsimTime, i - 2),
                  b = g_array_index(pl->iv, PpsimTime, i - 1);
        if (a >= t_end)
            continue;
        if (b <= t_end - len)
            break;
        t_end = MIN(t_end, a);
    }
    return t_end - len >= lo ? t_end - len : -1;
}

START_TEST(test_stream_plan_vs_scan)
{
    GRand *rng = g_rand_new_with_seed(17);
    for (int rep = 0; rep < 400; rep++) {
        ScanPlan ref = {g_array_new(FALSE, FALSE, sizeof(PpsimTime))};
        PpsimStreamPlan *pl = ppsim_stream_plan_new();
        int n = g_rand_int_range(rng, 1, 150), range = g_rand_int_range(rng, 1, 100),
            maxlen = g_rand_int_range(rng, 0, 6);
        for (int i = 0; i < n; i++) {
            PpsimTime t = g_rand_int_range(rng, 0, range),
                      len = g_rand_int_range(rng, 0, maxlen + 1);
            PpsimTime lo = g_rand_int_range(rng, 0, range), x;
            switch (g_rand_int_range(rng, 0, 3)) {
            case 0: /* an offload: the earliest slot */
                x = scan_earliest(&ref, t, len);
                ck_assert_int_eq(ppsim_stream_plan_earliest(pl, t, len, G_MAXINT64), x);
                break;
            case 1: /* a reload: the latest slot */
                x = scan_latest(&ref, lo, t + len, len);
                ck_assert_int_eq(ppsim_stream_plan_latest(pl, lo, t + len, len), x);
                break;
            default: /* congested: queue where it is */
                x = t;
            }
            if (x >= 0) {
                scan_take(&ref, x, x + len);
                ppsim_stream_plan_take(pl, x, x + len);
            }
            PpsimTime q = g_rand_int_range(rng, 0, range + 10), ql = g_rand_int_range(rng, 0, 7);
            PpsimTime e = scan_earliest(&ref, q, ql), by = g_rand_int_range(rng, 0, range + 10);
            ck_assert_int_eq(ppsim_stream_plan_earliest(pl, q, ql, G_MAXINT64), e);
            /* with a bound: the same answer up to it, else any start past it */
            PpsimTime eb = ppsim_stream_plan_earliest(pl, q, ql, by);
            if (e <= by)
                ck_assert_int_eq(eb, e);
            else
                ck_assert_int_gt(eb, by);
            ck_assert_int_eq(ppsim_stream_plan_latest(pl, lo, q, ql), scan_latest(&ref, lo, q, ql));
        }
        g_array_free(ref.iv, TRUE);
        ppsim_stream_plan_free(pl);
    }
    g_rand_free(rng);
}
END_TEST

Suite *
ppsim_test_suite(void)
{
    Suite *s = suite_create("offload");
    TCase *tc = tcase_create("pipeoffload");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_uniform_block_by_hand);
    tcase_add_test(tc, test_memory_curve);
    tcase_add_test(tc, test_table1_claims);
    tcase_add_test(tc, test_k_slowdown);
    tcase_add_test(tc, test_offload_list);
    tcase_add_test(tc, test_k_hardware);
    tcase_add_test(tc, test_light_recompute_bytes);
    tcase_add_test(tc, test_copy_sync_by_hand);
    tcase_add_test(tc, test_co_schedule_rounds);
    tcase_add_test(tc, test_co_schedule_hardware);
    tcase_add_test(tc, test_co_schedule_auto_replays);
    tcase_add_test(tc, test_stream_plan_vs_scan);
    suite_add_tcase(s, tc);
    return s;
}
