/* sim.h: PpsimSim, the one module that knows every other one.
 *
 * scenario -> cost model -> schedule generator (or CSV) -> checker -> task graph on the
 * modelled hardware -> metrics. No I/O beyond reading a custom schedule file.
 */
#pragma once

#include <glib.h>
#include "scenario/scenario.h"
#include "cost/cost-model.h"
#include "run-result.h"
#include "sched/generator.h"

G_BEGIN_DECLS

typedef enum {
    PPSIM_SIM_RECORD = 1 << 0, /* keep memory samples and flows (for traces and SVG) */
    PPSIM_SIM_EVENTS = 1 << 1, /* replay with the event engine even where the one-pass replay
                                * would do (same results; the tests compare the two) */
} PpsimSimFlags;

/* Builds the schedule @spec asks for in @scenario: the generator's output, or the CSV file
 * for "custom". *@costs_out (nullable) receives the costs it was built with.
 * Returns: (transfer full) (nullable). */
PpsimSchedule *ppsim_sim_build_schedule(const PpsimScenario *scenario,
                                        const PpsimScheduleSpec *spec, PpsimCosts **costs_out,
                                        GError **error);

/* The same, and *@solver (nullable) receives the generator's solver report. */
PpsimSchedule *ppsim_sim_build_schedule_full(const PpsimScenario *scenario,
                                             const PpsimScheduleSpec *spec, PpsimCosts **costs_out,
                                             PpsimSolverReport *solver, GError **error);

/* Replays @sched (checked first) with @costs on @scenario's hardware. Takes ownership of
 * @sched. Returns: (transfer full) (nullable). */
PpsimRunResult *ppsim_sim_replay(const PpsimScenario *scenario, const PpsimCosts *costs,
                                 PpsimSchedule *sched, const char *label, const char *generator,
                                 PpsimSimFlags flags, GError **error);

/* build + replay for one schedule spec. Errors are prefixed "schedule 'name': ".
 * Returns: (transfer full) (nullable). */
PpsimRunResult *ppsim_sim_run_spec(const PpsimScenario *scenario, const PpsimScheduleSpec *spec,
                                   PpsimSimFlags flags, GError **error);

/* Runs every schedule of @scenario in order. Returns: (transfer full) (nullable) a
 * GPtrArray of PpsimRunResult*. */
GPtrArray *ppsim_sim_run_all(const PpsimScenario *scenario, PpsimSimFlags flags, GError **error);

/* Settings of @scenario that do nothing or less than they seem (sim-warnings.c), given the
 * @results of its run (nullable: only what the scenario alone shows): one message per trap,
 * each once. Returns: (transfer full) a GPtrArray of char*. */
GPtrArray *ppsim_sim_warnings(const PpsimScenario *scenario, const GPtrArray *results);

G_END_DECLS
