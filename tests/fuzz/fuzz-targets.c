/* fuzz-targets.c: see fuzz-targets.h. Each target runs what a user's input reaches before the
 * simulation proper: parsing, the checks, and the cost model (where sizes turn into
 * picoseconds and bytes), or the schedule checker for a CSV. */
#include "fuzz-targets.h"
#include "cost/cost-model.h"
#include "schedule/schedule.h"

#include <string.h>

/* Parsing done, the cost model sees the scenario as a run would. */
static void
fuzz_costs(const PpsimScenario *sc)
{
    g_autoptr(GError) error = NULL;
    int stages = sc->training.pp * sc->training.chunks;
    g_autoptr(PpsimCosts) costs = ppsim_costs_new(sc, stages, &error);
}

void
ppsim_fuzz_scenario(const guint8 *data, gsize size)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc =
        ppsim_scenario_parse((const char *)data, size, "fuzz.yaml", "/nonexistent", NULL, &error);
    if (sc != NULL)
        fuzz_costs(sc);
    g_clear_error(&error);
    (void)ppsim_scenario_check_values((const char *)data, size, "fuzz.yaml", "/nonexistent", NULL,
                                      &error);
}

/* A small hardware-mode scenario: the --set lines below change it. */
static const char fuzz_base[] = "name: fuzz\n"
                                "hardware: {preset: dgx-a100-80gb}\n"
                                "model: {layers: 8, hidden: 1024, heads: 8, seq_len: 1024}\n"
                                "training: {pp: 4, microbatches: 8}\n"
                                "schedule: 1f1b\n";

void
ppsim_fuzz_set(const guint8 *data, gsize size)
{
    /* one override per line, at most 8; a NUL ends the text as it would an argument */
    g_autofree char *text = g_strndup((const char *)data, size);
    g_auto(GStrv) lines = g_strsplit(text, "\n", 9);
    if (g_strv_length(lines) > 8)
        g_clear_pointer(&lines[8], g_free);
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimScenario) sc =
        ppsim_scenario_parse(fuzz_base, strlen(fuzz_base), "base.yaml", "/nonexistent",
                             (const char *const *)lines, &error);
    if (sc != NULL)
        fuzz_costs(sc);
    g_autoptr(GPtrArray) specs = ppsim_schedule_specs_parse(text, "--schedule", NULL, NULL);
}

void
ppsim_fuzz_csv(const guint8 *data, gsize size)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(PpsimSchedule) sched =
        ppsim_schedule_from_csv((const char *)data, size, "fuzz.csv", &error);
    if (sched == NULL)
        return;
    if (ppsim_schedule_validate(sched, &error)) {
        /* what validates writes back and reads again to the same schedule */
        g_autoptr(GString) csv = ppsim_schedule_to_csv(sched);
        g_autoptr(PpsimSchedule) again = ppsim_schedule_from_csv(csv->str, csv->len, "w", NULL);
        g_assert(again != NULL);
        g_autoptr(GString) csv2 = ppsim_schedule_to_csv(again);
        g_assert(strcmp(csv->str, csv2->str) == 0);
    }
}

PpsimFuzzFunc
ppsim_fuzz_lookup(const char *name)
{
    if (strcmp(name, "scenario") == 0)
        return ppsim_fuzz_scenario;
    if (strcmp(name, "set") == 0)
        return ppsim_fuzz_set;
    if (strcmp(name, "csv") == 0)
        return ppsim_fuzz_csv;
    return NULL;
}
