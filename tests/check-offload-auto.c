/* check-offload-auto.c: PipeOffload's `co_schedule: auto` on a shared PCIe switch ([PO]
 * App. D) as the runner sees it: the replay the generator measured its schedule with is the
 * run's (the same bytes as a fresh replay), and option `co_microbatches` replays the three
 * co-schedules with fewer microbatches, then the winner with all of them. */
#include "ppsim-test.h"
#include "cost/cost-model.h"
#include "scenario/scenario.h"
#include "schedule/schedule.h"
#include "sim/sim.h"

#include <string.h>

#define PCIE "scenarios/a100_offload_pcie.yaml"

static const char *const modes[] = {"sync-interleaved", "independent", "sync-parallel"};

/* Runs generator @name on @sc with the options @kv (key, value pairs; NULL-terminated). */
static PpsimRunResult *
run_opts(const PpsimScenario *sc, const char *name, const char *const *kv, PpsimSimFlags flags,
         GError **error)
{
    g_autoptr(PpsimScheduleSpec) spec = ppsim_schedule_spec_new(name);
    for (int i = 0; kv != NULL && kv[i] != NULL; i += 2) {
        PpsimOptionValue o = {g_strdup(kv[i]), g_strdup(kv[i + 1]), {1, 1}};
        g_array_append_val(spec->options, o);
    }
    return ppsim_sim_run_spec(sc, spec, flags, error);
}

static PpsimRunResult *
run_ok(const PpsimScenario *sc, const char *name, const char *const *kv, PpsimSimFlags flags)
{
    g_autoptr(GError) error = NULL;
    PpsimRunResult *r = run_opts(sc, name, kv, flags, &error);
    ppsim_assert_no_error(error);
    return r;
}

static const char *
choice_value(const PpsimRunResult *r, const char *key)
{
    for (guint i = 0; r->choices != NULL && i < r->choices->len; i++)
        if (strcmp(g_array_index(r->choices, PpsimChoice, i).key, key) == 0)
            return g_array_index(r->choices, PpsimChoice, i).value;
    return NULL;
}

static char *
json_of(const PpsimScenario *sc, PpsimRunResult *r)
{
    return g_string_free(ppsim_test_report_one(sc, r, TRUE), FALSE);
}

static void
assert_arrays_equal(const GArray *a, const GArray *b, gsize elt, const char *what)
{
    ck_assert_msg((a == NULL) == (b == NULL), "%s: one is missing", what);
    if (a == NULL)
        return;
    ck_assert_msg(a->len == b->len, "%s: %u against %u", what, a->len, b->len);
    ck_assert_msg(a->len == 0 || memcmp(a->data, b->data, a->len * elt) == 0, "%s differ", what);
}

/* The run of po-f, whose auto co-schedule replays its candidates, takes the replay of the one
 * it returns; a fresh replay of that schedule gives the same JSON, op timings, transfers,
 * memory samples and flows, with and without recording. A fixed co-schedule measures
 * nothing and is replayed as usual. */
START_TEST(test_replay_reused)
{
    g_autoptr(PpsimScenario) sc = ppsim_test_load_scenario(PCIE, NULL);
    const PpsimSimFlags flags[] = {0, PPSIM_SIM_RECORD};
    for (guint f = 0; f < G_N_ELEMENTS(flags); f++) {
        g_autoptr(PpsimRunResult) a = run_ok(sc, "po-f", NULL, flags[f]);
        ck_assert(a->replay_reused);
        g_autoptr(GError) error = NULL;
        g_autoptr(PpsimCosts) costs = ppsim_costs_new(sc, a->n_stages, &error);
        ppsim_assert_no_error(error);
        g_autoptr(PpsimRunResult) b = ppsim_sim_replay(sc, costs, ppsim_schedule_copy(a->schedule),
                                                       a->label, a->generator, flags[f], &error);
        ppsim_assert_no_error(error);
        ck_assert(!b->replay_reused);
        b->choices = g_array_ref(a->choices);
        g_autofree char *ja = json_of(sc, a), *jb = json_of(sc, b);
        ck_assert_str_eq(ja, jb);
        for (int d = 0; d < a->p; d++) {
            assert_arrays_equal(a->compute_timing[d], b->compute_timing[d], sizeof(PpsimOpTiming),
                                "compute timings");
            assert_arrays_equal(a->copy_timing[d], b->copy_timing[d], sizeof(PpsimOpTiming),
                                "copy timings");
        }
        assert_arrays_equal(a->transfers, b->transfers, sizeof(PpsimTransfer), "transfers");
        assert_arrays_equal(a->mem_samples, b->mem_samples, sizeof(PpsimMemSample), "samples");
        assert_arrays_equal(a->flows, b->flows, sizeof(PpsimFlowRecord), "flows");
        ck_assert((flags[f] & PPSIM_SIM_RECORD) == 0 || a->flows->len > 0);
    }
    const char *fixed[] = {"co_schedule", "sync-interleaved", NULL};
    g_autoptr(PpsimRunResult) c = run_ok(sc, "po-f", fixed, 0);
    ck_assert(!c->replay_reused);
}
END_TEST

/* The co-schedule the rule picks from three explicit runs of @sc: the fastest that fits
 * (none fits: the fastest), ties to the first of `modes`. */
static const char *
best_by_rule(const PpsimScenario *sc, const char *name)
{
    int best = -1;
    PpsimTime best_ps = 0;
    gboolean best_fits = FALSE;
    for (int i = 0; i < (int)G_N_ELEMENTS(modes); i++) {
        const char *kv[] = {"co_schedule", modes[i], NULL};
        g_autoptr(PpsimRunResult) r = run_ok(sc, name, kv, 0);
        gboolean fits = !ppsim_run_result_any_oom(r);
        if (best < 0 || (fits && !best_fits) || (fits == best_fits && r->makespan_ps < best_ps)) {
            best = i;
            best_ps = r->makespan_ps;
            best_fits = fits;
        }
    }
    return modes[best];
}

/* @a and @b made the same schedule and the same makespan. */
static void
assert_same_run(const PpsimRunResult *a, const PpsimRunResult *b)
{
    ck_assert_int_eq(a->makespan_ps, b->makespan_ps);
    ck_assert(ppsim_schedule_equal(a->schedule, b->schedule));
}

/* co_microbatches on the PCIe scenario (p = 8, m = 32, p*m = 256): auto, all and a number
 * >= m replay the three with all m; 8 replays them with 8 microbatches (the mode the rule
 * picks from explicit runs at m = 8), then the winner with all 32 (the explicit run of that
 * mode); 4 picks independent there (a different winner), and says so. Under a 16.4 GiB limit
 * every plan fits with 2 microbatches, none with 32: the three are replayed with all m, as
 * `all` does, and the note says why. */
START_TEST(test_co_microbatches)
{
    g_autoptr(PpsimScenario) sc = ppsim_test_load_scenario(PCIE, NULL);
    const char *all[] = {"co_microbatches", "all", NULL};
    g_autoptr(PpsimRunResult) full = run_ok(sc, "po-f", all, 0);
    ck_assert(strstr(ppsim_test_choice_note(full, "co_schedule"), " of the ") == NULL);
    g_autoptr(PpsimRunResult) dflt = run_ok(sc, "po-f", NULL, 0);
    assert_same_run(dflt, full);
    ck_assert_ptr_null(choice_value(dflt, "co_microbatches"));
    const char *many[] = {"co_microbatches", "40", NULL};
    g_autoptr(PpsimRunResult) forty = run_ok(sc, "po-f", many, 0);
    assert_same_run(forty, full);

    const char *trials[] = {"8", "4"};
    for (guint t = 0; t < G_N_ELEMENTS(trials); t++) {
        const char *kv[] = {"co_microbatches", trials[t], NULL};
        g_autoptr(PpsimRunResult) r = run_ok(sc, "po-f", kv, 0);
        ck_assert(r->replay_reused);
        const char *chosen = choice_value(r, "co_schedule");
        g_autofree char *m_set = g_strdup_printf("training.microbatches=%s", trials[t]);
        const char *ovr[] = {m_set, NULL};
        g_autoptr(PpsimScenario) small = ppsim_test_load_scenario(PCIE, ovr);
        ck_assert_str_eq(chosen, best_by_rule(small, "po-f"));
        ck_assert_str_eq(chosen, t == 0 ? "sync-interleaved" : "independent");
        const char *fixed[] = {"co_schedule", chosen, NULL};
        g_autoptr(PpsimRunResult) e = run_ok(sc, "po-f", fixed, 0);
        assert_same_run(r, e);
        g_autofree char *said = g_strdup_printf("with %s of the 32 microbatches", trials[t]);
        ck_assert(strstr(ppsim_test_choice_note(r, "co_schedule"), said) != NULL);
    }

    const char *lim[] = {"memory.limit=16.4GiB", NULL};
    g_autoptr(PpsimScenario) tight = ppsim_test_load_scenario(PCIE, lim);
    const char *two[] = {"co_microbatches", "2", NULL};
    g_autoptr(PpsimRunResult) a = run_ok(tight, "po-f", two, 0);
    g_autoptr(PpsimRunResult) b = run_ok(tight, "po-f", all, 0);
    assert_same_run(a, b);
    ck_assert(strstr(ppsim_test_choice_note(a, "co_schedule"), "with all 32 it does not fit"));

    const char *bad[] = {"0", "x", "-3", "2.5"};
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        const char *kv[] = {"co_microbatches", bad[i], NULL};
        g_autoptr(GError) error = NULL;
        g_autoptr(PpsimRunResult) r = run_opts(sc, "po-f", kv, 0, &error);
        ck_assert_ptr_null(r);
        ck_assert(strstr(error->message, "'co_microbatches' must be auto, all or a whole") != NULL);
    }
}
END_TEST

/* Above p*m = 4096 (p = 8, m = 520) auto replays the three with max(ceil(4096/8), 8) = 512
 * microbatches and says so; the schedule is the explicit run of the mode it names. */
START_TEST(test_co_microbatches_auto_large)
{
    const char *ovr[] = {"training.microbatches=520", NULL};
    g_autoptr(PpsimScenario) sc = ppsim_test_load_scenario(PCIE, ovr);
    g_autoptr(PpsimRunResult) r = run_ok(sc, "po-h", NULL, 0);
    ck_assert_str_eq(choice_value(r, "co_microbatches"), "512");
    ck_assert(strstr(ppsim_test_choice_note(r, "co_schedule"), "with 512 of the 520") != NULL);
    const char *fixed[] = {"co_schedule", choice_value(r, "co_schedule"), NULL};
    g_autoptr(PpsimRunResult) e = run_ok(sc, "po-h", fixed, 0);
    assert_same_run(r, e);
}
END_TEST

Suite *
ppsim_test_suite(void)
{
    Suite *s = suite_create("offload-auto");
    TCase *tc = tcase_create("co-schedule");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_replay_reused);
    tcase_add_test(tc, test_co_microbatches);
    tcase_add_test(tc, test_co_microbatches_auto_large);
    suite_add_tcase(s, tc);
    return s;
}
