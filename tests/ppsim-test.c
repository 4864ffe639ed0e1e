/* ppsim-test.c: the runner main shared by every check-<module> binary. */
#include "ppsim-test.h"

#include <stdlib.h>

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

int
main(void)
{
    SRunner *runner = srunner_create(ppsim_test_suite());
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
