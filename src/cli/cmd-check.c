/* cmd-check.c: `ppsim check SCENARIO`: load and validate a scenario and build (and check)
 * every schedule it names, without simulating. */
#include "cli/cli.h"
#include "sim/sim.h"
#include "util/quote.h"

#include <stdio.h>

static const char check_description[] =
    "Parses SCENARIO, checks every key and value, builds each schedule it names (or reads\n"
    "its CSV file) and runs the schedule checker (every F has its backward, W after B, no\n"
    "cyclic wait...). Nothing is simulated. Prints one line per schedule on success.\n"
    "\n"
    "Exit status: 0 valid, 1 invalid (the error names file:line:col), 2 usage error.";

int
ppsim_cmd_check(int argc, char **argv)
{
    char **sets = NULL;
    GOptionEntry entries[] = {{"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &sets,
                               "Override a scenario value, e.g. training.pp=4 (repeatable)",
                               "KEY.PATH=VALUE"},
                              G_OPTION_ENTRY_NULL};
    g_autoptr(GOptionContext) ctx = g_option_context_new("SCENARIO - validate without simulating");
    g_option_context_add_main_entries(ctx, entries, NULL);
    g_option_context_set_description(ctx, check_description);
    int rc = PPSIM_EXIT_OK;
    if (!ppsim_cli_parse(ctx, &argc, &argv)) {
        rc = PPSIM_EXIT_USAGE;
    } else if (argc != 2) {
        rc = ppsim_cli_usage("expected one SCENARIO (see 'ppsim check --help')");
    } else {
        g_autoptr(GError) error = NULL;
        g_autoptr(PpsimScenario) sc =
            ppsim_scenario_load_file(argv[1], (const char *const *)sets, &error);
        for (guint i = 0; sc != NULL && i < sc->schedules->len && error == NULL; i++) {
            PpsimScheduleSpec *spec = g_ptr_array_index(sc->schedules, i);
            PpsimCosts *costs = NULL;
            g_autoptr(PpsimSchedule) sched = ppsim_sim_build_schedule(sc, spec, &costs, &error);
            ppsim_costs_free(costs);
            if (sched != NULL && ppsim_schedule_validate(sched, &error))
                printf("ok: %s: schedule '%s': p=%d v=%d m=%d, %zu ops\n", argv[1], spec->label,
                       sched->n_devices, sched->n_stages / sched->n_devices, sched->n_microbatches,
                       (size_t)ppsim_schedule_n_ops(sched));
            else if (error != NULL) {
                g_autofree char *q = ppsim_quote(spec->label);
                g_prefix_error(&error, "schedule '%s': ", q);
            }
        }
        if (error != NULL) {
            rc = ppsim_cli_fail(error);
        } else {
            g_autoptr(GPtrArray) warnings = ppsim_sim_warnings(sc, NULL);
            for (guint i = 0; i < warnings->len; i++)
                ppsim_cli_warning(g_ptr_array_index(warnings, i));
        }
    }
    g_strfreev(sets);
    return rc;
}
