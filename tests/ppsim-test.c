/* ppsim-test.c: the runner main shared by every check-<module> binary. */
#include "ppsim-test.h"
#include "milp/milp.h"
#include "report/report.h"
#include "sched/generator.h"
#include "schedule/schedule.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

char *
ppsim_test_data_path(const char *relative)
{
    const char *dir = g_getenv("PPSIM_TEST_DATADIR");
    g_assert(dir != NULL);
    return g_build_filename(dir, relative, NULL);
}

char *
ppsim_test_src_path(const char *relative)
{
    const char *dir = g_getenv("PPSIM_TEST_SRCDIR");
    g_assert(dir != NULL);
    return g_build_filename(dir, relative, NULL);
}

PpsimScenario *
ppsim_test_load_scenario(const char *relative, const char *const *overrides)
{
    g_autofree char *path = ppsim_test_src_path(relative);
    g_autoptr(GError) error = NULL;
    PpsimScenario *sc = ppsim_scenario_load_file(path, overrides, &error);
    ppsim_assert_no_error(error);
    return sc;
}

GArray *
ppsim_test_random_doubles(int n, GRand *rng, double lo, double hi)
{
    GArray *a = g_array_sized_new(FALSE, FALSE, sizeof(double), n);
    for (int i = 0; i < n; i++) {
        double v = g_rand_double_range(rng, lo, hi);
        g_array_append_val(a, v);
    }
    return a;
}

PpsimRunResult *
ppsim_test_run_option(const PpsimScenario *scenario, const char *name, const char *key,
                      const char *value, GError **error)
{
    g_autoptr(PpsimScheduleSpec) spec = ppsim_schedule_spec_new(name);
    if (key != NULL) {
        PpsimOptionValue o = {g_strdup(key), g_strdup(value), {1, 1}};
        g_array_append_val(spec->options, o);
    }
    return ppsim_sim_run_spec(scenario, spec, 0, error);
}

const char *
ppsim_test_choice_note(const PpsimRunResult *res, const char *key)
{
    for (guint i = 0; res->choices != NULL && i < res->choices->len; i++) {
        const PpsimChoice *c = &g_array_index(res->choices, PpsimChoice, i);
        if (g_strcmp0(c->key, key) == 0)
            return c->note;
    }
    return NULL;
}

static PpsimRunResult *
run_two(const PpsimScenario *sc, const char *name, const char *key, const char *value,
        const char *budget, GError **error)
{
    g_autoptr(PpsimScheduleSpec) spec = ppsim_schedule_spec_new(name);
    if (key != NULL) {
        PpsimOptionValue o = {g_strdup(key), g_strdup(value), {1, 1}};
        g_array_append_val(spec->options, o);
    }
    if (budget != NULL) {
        PpsimOptionValue o = {g_strdup("budget"), g_strdup(budget), {1, 1}};
        g_array_append_val(spec->options, o);
    }
    return ppsim_sim_run_spec(sc, spec, 0, error);
}

PpsimRunResult *
ppsim_test_budget_default_is_full(const PpsimScenario *sc, const char *name, const char *key,
                                  const char *value)
{
    g_autoptr(GError) error = NULL;
    PpsimRunResult *def = run_two(sc, name, key, value, NULL, &error);
    ppsim_assert_no_error(error);
    ck_assert_msg(ppsim_test_choice_note(def, "budget") == NULL, "%s: default budget cut: %s", name,
                  ppsim_test_choice_note(def, "budget"));
    g_autoptr(GString) want = ppsim_schedule_to_csv(def->schedule);
    const char *full[] = {"unlimited", "0"};
    for (guint i = 0; i < G_N_ELEMENTS(full); i++) {
        g_autoptr(PpsimRunResult) res = run_two(sc, name, key, value, full[i], &error);
        ppsim_assert_no_error(error);
        g_autoptr(GString) got = ppsim_schedule_to_csv(res->schedule);
        ck_assert_msg(g_string_equal(want, got), "%s: budget %s gives another schedule", name,
                      full[i]);
        ck_assert(ppsim_test_choice_note(res, "budget") == NULL);
    }
    const char *bad[] = {"-1", "lots", "1.5"};
    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autoptr(PpsimRunResult) res = run_two(sc, name, key, value, bad[i], &error);
        ck_assert(res == NULL);
        ck_assert_msg(error != NULL && strstr(error->message, "option 'budget'"), "%s: %s", name,
                      error ? error->message : "no error");
        g_clear_error(&error);
    }
    return def;
}

/* The tests ppsim_test_add_cbc() left out (set while the suite is built, before any fork). */
static GString *skipped_cbc;
static int n_skipped_cbc;

void
ppsim_test_add_cbc_full(TCase *tc, const TTest *test, const char *name)
{
    if (ppsim_milp_available()) {
        tcase_add_test(tc, test);
        return;
    }
    if (skipped_cbc == NULL)
        skipped_cbc = g_string_new(NULL);
    g_string_append_printf(skipped_cbc, "%s%s", n_skipped_cbc++ ? ", " : "", name);
}

/* Exit status: 1 when a test failed; else 77 (skipped) when a test was left out because it
 * needs CBC; else 0. */
int
main(void)
{
    SRunner *runner = srunner_create(ppsim_test_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    if (failed != 0)
        return EXIT_FAILURE;
    if (n_skipped_cbc > 0) {
        fprintf(stderr, "SKIP: %d test(s) need the CBC solver, which this build lacks: %s\n",
                n_skipped_cbc, skipped_cbc->str);
        return 77;
    }
    return EXIT_SUCCESS;
}

PpsimTestExec
ppsim_test_exec(const char *cwd, const char *const *args)
{
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)g_getenv("PPSIM_EXE"));
    for (int i = 0; args[i] != NULL; i++)
        g_ptr_array_add(argv, (gpointer)args[i]);
    g_ptr_array_add(argv, NULL);
    PpsimTestExec r = {0};
    g_autoptr(GError) error = NULL;
    ck_assert_msg(argv->pdata[0] != NULL, "PPSIM_EXE is not set");
    ck_assert(g_spawn_sync(cwd, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, &r.out,
                           &r.err, &r.status, &error));
    r.status = WIFEXITED(r.status) ? WEXITSTATUS(r.status) : -1;
    return r;
}

PpsimTestExec
ppsim_test_exec_va(const char *cwd, va_list ap)
{
    g_autoptr(GPtrArray) args = g_ptr_array_new();
    for (const char *a = va_arg(ap, const char *); a; a = va_arg(ap, const char *))
        g_ptr_array_add(args, (gpointer)a);
    g_ptr_array_add(args, NULL);
    return ppsim_test_exec(cwd, (const char *const *)args->pdata);
}

void
ppsim_test_exec_clear(PpsimTestExec *r)
{
    g_free(r->out);
    g_free(r->err);
}

GString *
ppsim_test_report_one(const PpsimScenario *scenario, PpsimRunResult *r, gboolean json)
{
    g_autoptr(GPtrArray) one = g_ptr_array_new();
    g_ptr_array_add(one, r);
    GString *out = g_string_new(NULL);
    if (json)
        ppsim_report_json(out, scenario, one);
    else
        ppsim_report_text(out, scenario, one);
    return out;
}
