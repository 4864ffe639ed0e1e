/* check-replay.c: the one-pass replay (src/sim-fast.c) against the event engine. Every
 * registered generator, on many shapes, explicit costs (round ones, where many events tie,
 * and random ones), options and memory caps, is replayed both ways (PPSIM_SIM_EVENTS forces
 * the engine); the text, JSON and CSV reports and every op's timing must be the same bytes,
 * and errors the same message. The tally checks that the one-pass replay really ran on
 * schedules with copy ops, offload, recompute and cross-device copy waits, that it declined
 * where two streams change one memory pool at one instant, and that it never runs where it
 * must not (hardware mode, traces). */
#include "ppsim-test.h"
#include "cost/cost-model.h"
#include "report/report.h"
#include "sched/registry.h"
#include "schedule/schedule.h"

#include <string.h>

typedef struct {
    int cases, refused, one_pass, declined;
    /* one-pass cases whose schedule has ops of that sort */
    int with_copy, with_offload, with_recompute, with_sync, with_parallel;
} Tally;

/* Everything a replay reports, as text: the three reports and each op's start and end. */
static char *
result_dump(const PpsimScenario *sc, PpsimRunResult *res)
{
    g_autoptr(GPtrArray) one = g_ptr_array_new();
    g_ptr_array_add(one, res);
    res->solver.seconds = 0; /* a solver's wall-clock time: the only figure that may differ */
    g_autoptr(GString) out = g_string_new(NULL);
    ppsim_report_text(out, sc, one);
    ppsim_report_json(out, sc, one);
    ppsim_report_csv(out, sc, one);
    for (int d = 0; d < res->p; d++)
        for (int list = 0; list < 2; list++) {
            const GArray *t = list == 0 ? res->compute_timing[d] : res->copy_timing[d];
            g_string_append_printf(out, "\n%d.%d:", d, list);
            for (guint i = 0; i < t->len; i++) {
                const PpsimOpTiming *x = &g_array_index(t, PpsimOpTiming, i);
                g_string_append_printf(out, " %" G_GINT64_FORMAT "-%" G_GINT64_FORMAT, x->start_ps,
                                       x->end_ps);
            }
        }
    return g_string_free(g_steal_pointer(&out), FALSE);
}

static void
tally_schedule(Tally *t, const PpsimScenario *sc, const PpsimSchedule *sched)
{
    gboolean copy = FALSE, offload = FALSE, recompute = FALSE, sync = FALSE;
    for (int d = 0; d < sched->n_devices; d++) {
        copy |= sched->copy[d]->len > 0;
        sync |= sched->copy_sync[d]->len > 0;
        for (guint i = 0; i < sched->copy[d]->len; i++)
            offload |= g_array_index(sched->copy[d], PpsimOp, i).kind == PPSIM_OP_OFF;
        for (guint i = 0; i < sched->compute[d]->len; i++)
            recompute |= g_array_index(sched->compute[d], PpsimOp, i).kind == PPSIM_OP_R;
    }
    t->with_copy += copy;
    t->with_offload += offload;
    t->with_recompute += recompute;
    t->with_sync += sync;
    t->with_parallel += sc->parallel.present;
}

/* Replays the scenario's one schedule both ways and compares. */
static void
compare_paths(const PpsimScenario *sc, Tally *t, const char *what)
{
    const PpsimScheduleSpec *spec = g_ptr_array_index(sc->schedules, 0);
    GError *e_fast = NULL, *e_events = NULL;
    g_autoptr(PpsimRunResult) fast = ppsim_sim_run_spec(sc, spec, 0, &e_fast);
    g_autoptr(PpsimRunResult) events = ppsim_sim_run_spec(sc, spec, PPSIM_SIM_EVENTS, &e_events);
    t->cases++;
    ck_assert_msg((fast == NULL) == (events == NULL), "%s: one replay failed: %s", what,
                  e_fast     ? e_fast->message
                  : e_events ? e_events->message
                             : "");
    if (fast == NULL) {
        ck_assert_str_eq(e_fast->message, e_events->message);
        t->refused++;
        g_error_free(e_fast);
        g_error_free(e_events);
        return;
    }
    ck_assert_msg(!events->one_pass, "%s: PPSIM_SIM_EVENTS replayed in one pass", what);
    g_autofree char *a = result_dump(sc, fast);
    g_autofree char *b = result_dump(sc, events);
    if (strcmp(a, b) != 0) {
        gsize k = 0;
        while (a[k] == b[k])
            k++;
        ck_abort_msg("%s: the replays differ at byte %zu:\none pass: %.120s\nevents:   %.120s",
                     what, (size_t)k, a + (k > 40 ? k - 40 : 0), b + (k > 40 ? k - 40 : 0));
    }
    if (!fast->one_pass) {
        t->declined += sc->costs.present; /* explicit mode: declined, not inapplicable */
        return;
    }
    t->one_pass++;
    tally_schedule(t, sc, fast->schedule);
}

static PpsimScenario *
parse_scenario(const char *yaml)
{
    g_autoptr(GError) error = NULL;
    PpsimScenario *sc =
        ppsim_scenario_parse(yaml, strlen(yaml), "replay-test.yaml", ".", NULL, &error);
    ck_assert_msg(sc != NULL, "%s\n%s", error ? error->message : "", yaml);
    return sc;
}

/* Generator options tried besides the defaults: "name" alone, or a YAML spec. */
static const char *const option_specs[] = {
    "{name: 1f1b, recompute: 0.5}",
    "{name: 1f1b, recompute: 1}",
    "{name: interleaved, recompute: t-recomp}",
    "{name: interleaved, recompute: 0.3, group_size: 2}",
    "{name: interleaved, pairs: true}",
    "{name: zb, memory_limit: 2}",
    "{name: zb-v, memory_limit: 3}",
    "{name: pipeoffload, offload: full}",
    "{name: pipeoffload, offload: none}",
    "{name: pipeoffload, strategy: interleaved}",
    "{name: pipeoffload, co_schedule: sync-interleaved}",
    "{name: pipeoffload, offload: full, co_schedule: sync-parallel}",
    "{name: po-h, co_schedule: sync-interleaved}",
    "{name: po-f, co_schedule: sync-parallel}",
    "{name: tpipe, recompute: t-recomp}",
    "{name: tpipe, offload_optimizer: t-offload, bits: 8}",
    "{name: adaoffload, memory_limit: 2}",
};

/* One explicit-cost scenario: @costs is the inside of the costs mapping. */
static char *
explicit_yaml(int p, int m, int v, const char *schedule, const char *costs, const char *extra)
{
    return g_strdup_printf("name: replay\ntraining: {pp: %d, microbatches: %d, chunks: %d}\n"
                           "schedule: %s\ncosts: {%s}\n%s",
                           p, m, v, schedule, costs, extra ? extra : "");
}

/* Costs drawn from @rng: times with three decimals, so that events rarely tie; every stage
 * its own times and activation when @stages > 0. */
static char *
random_costs(GRand *rng, int stages)
{
    g_autoptr(GString) s = g_string_new(NULL);
    g_string_append_printf(s,
                           "forward: %.3f, backward_input: %.3f, backward_weight: %.3f, "
                           "p2p: %.3f, offload: %.3f, activation: %d, weight_activation: %.1f",
                           g_rand_double_range(rng, 0.5, 2), g_rand_double_range(rng, 0.5, 3),
                           g_rand_double_range(rng, 0.2, 1.5), g_rand_double_range(rng, 0, 0.3),
                           g_rand_double_range(rng, 0.1, 2), g_rand_int_range(rng, 1, 4),
                           g_rand_int_range(rng, 1, 3) * 0.5);
    const char *lists[] = {"stage_forward", "stage_backward_input", "stage_backward_weight",
                           "stage_activation"};
    for (guint k = 0; stages > 0 && k < G_N_ELEMENTS(lists); k++) {
        g_string_append_printf(s, ", %s: [", lists[k]);
        for (int i = 0; i < stages; i++)
            g_string_append_printf(s, "%s%.3f", i ? ", " : "",
                                   k == 3 ? (double)g_rand_int_range(rng, 1, 4)
                                          : g_rand_double_range(rng, 0.3, 2.5));
        g_string_append_c(s, ']');
    }
    return g_string_free(g_steal_pointer(&s), FALSE);
}

static const struct {
    int p, m, v;
} shapes[] = {{1, 1, 1}, {1, 3, 2}, {2, 3, 1}, {2, 4, 2},
              {3, 6, 2}, {4, 8, 2}, {4, 5, 1}, {4, 8, 3}};

static void
run_shapes(const char *schedule, int chunks, Tally *t, GRand *rng)
{
    for (guint i = 0; i < G_N_ELEMENTS(shapes); i++) {
        int p = shapes[i].p, m = shapes[i].m, v = shapes[i].v;
        int stages = p * (chunks > 0 ? chunks : v);
        g_autofree char *random = random_costs(rng, 0);
        g_autofree char *per_stage = random_costs(rng, stages);
        const char *costs[] = {
            "forward: 1, backward_input: 1, backward_weight: 1, p2p: 0, offload: 1",
            "forward: 1, backward_input: 2, backward_weight: 1, p2p: 0.25, offload: 0.5, "
            "activation: 2, weight_activation: 1",
            random,
            per_stage,
        };
        for (guint k = 0; k < G_N_ELEMENTS(costs); k++) {
            /* a memory limit now and then: generators with a cap default to it */
            const char *extra = k == 1   ? "memory: {limit: 6}\n"
                                : k == 3 ? "parallel: {tp: 2}\n"
                                         : NULL;
            g_autofree char *yaml = explicit_yaml(p, m, v, schedule, costs[k], extra);
            g_autoptr(PpsimScenario) sc = parse_scenario(yaml);
            compare_paths(sc, t, yaml);
        }
    }
}

/* Every generator (but optpipe's MILP, below) with its defaults and the options above. */
START_TEST(test_generators_both_ways)
{
    Tally t = {0};
    g_autoptr(GRand) rng = g_rand_new_with_seed(20240613);
    for (guint i = 0; i < ppsim_sched_registry_count(); i++) {
        const PpsimScheduleClass *klass = ppsim_sched_registry_nth(i);
        if (strcmp(klass->name, "optpipe") == 0)
            continue;
        run_shapes(klass->name, klass->chunks, &t, rng);
        for (guint k = 0; k < G_N_ELEMENTS(option_specs); k++) {
            g_autofree char *prefix = g_strdup_printf("{name: %s,", klass->name);
            if (g_str_has_prefix(option_specs[k], prefix))
                run_shapes(option_specs[k], klass->chunks, &t, rng);
        }
    }
    g_printerr("replay: %d cases, %d refused by their generator, %d in one pass (with copy ops "
               "%d, offload %d, recompute %d, cross-device copy waits %d, a parallel section "
               "%d), %d declined\n",
               t.cases, t.refused, t.one_pass, t.with_copy, t.with_offload, t.with_recompute,
               t.with_sync, t.with_parallel, t.declined);
    /* the one-pass replay ran on most, with copy ops, offload, recompute, cross-device copy
     * waits and a parallel section among them, and declined on some (two streams changing
     * a device's memory at one instant, in an order only the event loop knows) */
    ck_assert_int_gt(t.one_pass, 3 * (t.cases - t.refused) / 4);
    ck_assert_int_gt(t.with_copy, 100);
    ck_assert_int_gt(t.with_offload, 100);
    ck_assert_int_gt(t.with_recompute, 100);
    ck_assert_int_gt(t.with_sync, 20);
    ck_assert_int_gt(t.with_parallel, 100);
    ck_assert_int_gt(t.declined, 20);
}
END_TEST

/* OptPipe's MILP on two small shapes (solved to optimality well within the limits). */
START_TEST(test_optpipe_both_ways)
{
    Tally t = {0};
    const char *costs = "forward: 1.1, backward_input: 1.7, backward_weight: 0.6, p2p: 0.05, "
                        "offload: 0.4";
    for (int m = 2; m <= 3; m++) {
        g_autofree char *yaml =
            explicit_yaml(2, m, 1, "{name: optpipe, node_limit: 20, time_limit: 60}", costs,
                          "memory: {limit: 3}\n");
        g_autoptr(PpsimScenario) sc = parse_scenario(yaml);
        compare_paths(sc, &t, yaml);
    }
    ck_assert_int_eq(t.cases, 2);
}
END_TEST

/* A compute op's wait on its device's copy op (`&i`): F1 starts only once the offload of F0's
 * activation has ended, so the activation peak is one, not two; both replays agree, and
 * without the wait F1 starts at once and the peak is two. By hand (F = B = W = 1 ms, a
 * 0.5 ms transfer): F0 [0, 1], OFF0 [1, 1.5], F1 [1.5, 2.5], B1 [2.5, 3.5], W1 [3.5, 4.5],
 * RL0 after W1 [4.5, 5], B0 [5, 6], W0 [6, 7]; without the wait everything up to RL0 is
 * 0.5 ms earlier. */
START_TEST(test_compute_waits_copy)
{
    static const char *const csv[2] = {"0F0,0F1&0,0I1,0W1,0I0,0W0,|,0O0,0L0@3\n",
                                       "0F0,0F1,0I1,0W1,0I0,0W0,|,0O0,0L0@3\n"};
    gint64 peak[2][2];
    for (int wait = 0; wait < 2; wait++)
        for (int events = 0; events < 2; events++) {
            g_autoptr(GError) error = NULL;
            PpsimSchedule *sched =
                ppsim_schedule_from_csv(csv[wait], strlen(csv[wait]), "w.csv", &error);
            ppsim_assert_no_error(error);
            g_autoptr(PpsimScenario) sc = ppsim_scenario_new_explicit(1, 1, 2, "custom");
            sc->costs.offload_ps = PPSIM_PS_PER_MS / 2;
            g_autoptr(PpsimCosts) costs = ppsim_costs_new(sc, 1, &error);
            ppsim_assert_no_error(error);
            g_autoptr(PpsimRunResult) res = ppsim_sim_replay(sc, costs, sched, "w", "custom",
                                                             events ? PPSIM_SIM_EVENTS : 0, &error);
            ppsim_assert_no_error(error);
            PpsimTime ms = PPSIM_PS_PER_MS;
            ck_assert_int_eq(res->makespan_ps, wait == 0 ? 7 * ms : 13 * ms / 2);
            peak[wait][events] = res->devices[0].peak_activation;
        }
    /* one activation against two (in the replay's internal units) */
    ck_assert_int_gt(peak[0][0], 0);
    ck_assert_int_eq(peak[0][1], peak[0][0]);
    ck_assert_int_eq(peak[1][0], 2 * peak[0][0]);
    ck_assert_int_eq(peak[1][1], 2 * peak[0][0]);
}
END_TEST

/* A cyclic wait: the same message both ways (the checker names the op). */
START_TEST(test_cycle_both_ways)
{
    static const char csv[] = "0F0,0B0,0F1,0B1\n1B0,1F0,1F1,1B1\n";
    for (int events = 0; events < 2; events++) {
        g_autoptr(GError) error = NULL;
        PpsimSchedule *sched = ppsim_schedule_from_csv(csv, strlen(csv), "cycle.csv", &error);
        ppsim_assert_no_error(error);
        g_autoptr(PpsimScenario) sc = ppsim_scenario_new_explicit(2, 1, 2, "1f1b");
        g_autoptr(PpsimCosts) costs = ppsim_costs_new(sc, 2, &error);
        ppsim_assert_no_error(error);
        g_autoptr(PpsimRunResult) res = ppsim_sim_replay(sc, costs, sched, "cycle", "custom",
                                                         events ? PPSIM_SIM_EVENTS : 0, &error);
        ck_assert_ptr_null(res);
        ck_assert_msg(error &&
                          strstr(error->message, "'BW(s=0, mb=0)' on device 0 can never start"),
                      "%s", error ? error->message : "no error");
    }
}
END_TEST

/* Where it must not run: hardware mode (flows share links), traces (the event order of the
 * memory samples), a CPU optimizer step (a shared worker stream). */
START_TEST(test_one_pass_only_where_exact)
{
    Tally t = {0};
    static const char *const hardware[] = {
        "name: hw\nhardware: {preset: dgx-a100-80gb}\nmodel: {layers: 8, hidden: 1024, heads: "
        "8, seq_len: 1024, vocab: 32000}\ntraining: {pp: 4, microbatches: 8}\nschedule: 1f1b\n",
        "name: hw3d\nhardware: {preset: dgx-h100-80gb, nodes: 2}\nmodel: {layers: 8, hidden: "
        "1024, heads: 8, seq_len: 1024, vocab: 32000}\ntraining: {microbatches: 8}\n"
        "parallel: {tp: 2, pp: 4, dp: 2}\nschedule: zb-h1\n",
    };
    for (guint i = 0; i < G_N_ELEMENTS(hardware); i++) {
        g_autoptr(PpsimScenario) sc = parse_scenario(hardware[i]);
        compare_paths(sc, &t, hardware[i]);
    }
    g_autofree char *cpu = explicit_yaml(
        2, 4, 2, "{name: tpipe, offload_optimizer: t-offload}",
        "forward: 1, backward_input: 1, backward_weight: 1, p2p: 0.1, offload: 0.3", NULL);
    g_autoptr(PpsimScenario) sc = parse_scenario(cpu);
    compare_paths(sc, &t, cpu);
    ck_assert_int_eq(t.one_pass, 0);
    g_autofree char *plain = explicit_yaml(
        4, 8, 1, "1f1b", "forward: 1, backward_input: 1, backward_weight: 1, p2p: 0.1", NULL);
    g_autoptr(PpsimScenario) one = parse_scenario(plain);
    const PpsimScheduleSpec *spec = g_ptr_array_index(one->schedules, 0);
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimRunResult) untraced = ppsim_sim_run_spec(one, spec, 0, &error);
    g_autoptr(PpsimRunResult) traced = ppsim_sim_run_spec(one, spec, PPSIM_SIM_RECORD, &error);
    ppsim_assert_no_error(error);
    ck_assert(untraced->one_pass && !traced->one_pass);
    ck_assert_ptr_nonnull(traced->mem_samples);
}
END_TEST

Suite *
ppsim_test_suite(void)
{
    Suite *s = suite_create("replay");
    TCase *tc = tcase_create("replay");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_generators_both_ways);
    tcase_add_test(tc, test_optpipe_both_ways);
    tcase_add_test(tc, test_cycle_both_ways);
    tcase_add_test(tc, test_compute_waits_copy);
    tcase_add_test(tc, test_one_pass_only_where_exact);
    suite_add_tcase(s, tc);
    return s;
}
