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

/* Checks that every spec of @specs (PpsimScheduleSpec*) names a registered generator or
 * "custom"; the error names the first unknown one with a did-you-mean (sweeps check their
 * schedule values with it at load). */
gboolean ppsim_sim_check_schedule_names(const GPtrArray *specs, GError **error);

/* The schedule `--schedule NAME` names: @scenario's spec of that label or name (with its
 * options), taken out of @scenario, else a plain spec of a registered generator; an error
 * ("--schedule: unknown schedule ...") otherwise. Returns: (transfer full) (nullable). */
PpsimScheduleSpec *ppsim_sim_take_schedule(PpsimScenario *scenario, const char *name,
                                           GError **error);

/* Settings of @scenario that do nothing or less than they seem (sim-warnings.c), given the
 * @results of its run (nullable: only what the scenario alone shows): one message per trap,
 * each once. Returns: (transfer full) a GPtrArray of char*. */
GPtrArray *ppsim_sim_warnings(const PpsimScenario *scenario, const GPtrArray *results);

/* `ppsim calibrate` (sim-calibrate.c): one hardware efficiency fitted to measured runs. */
typedef struct {
    const char *path;  /* a scenario file */
    double measured_s; /* its measured seconds per iteration, > 0 */
} PpsimCalibrateRun;

typedef struct {
    const char *key;              /* a hardware.* key naming an efficiency; NULL: the GEMM
                                   * efficiency of the runs' dtype, bf16's or FP8's */
    const char *schedule;         /* nullable: each scenario's first schedule */
    const char *const *overrides; /* nullable: --set values, applied before the key */
} PpsimCalibrateOptions;

typedef struct {
    char *schedule;      /* the label of the schedule replayed */
    double value_before; /* the scenario's own value of the key */
    double before_s;     /* ppsim's seconds per iteration as the scenario gives it */
    double after_s;      /* at the fitted value */
} PpsimCalibratedRun;

typedef struct {
    char *key;          /* the key fitted */
    double value;       /* the fitted value, to 4 significant digits, in [0.01, 1] */
    double mean_before; /* mean |relative error| %, as given and fitted */
    double mean_after;
    int replays; /* replays the search ran (the "as given" ones included) */
    PpsimCalibratedRun *runs;
    int n_runs;
} PpsimCalibration;

/* The value of @o->key that makes the @n @runs' simulated iterations take their measured
 * times: exactly for one run (an error when no value in [0.01, 1] reaches it, naming the
 * bound), the least mean |relative error| for several. Returns: (transfer full)
 * (nullable). */
PpsimCalibration *ppsim_calibrate(const PpsimCalibrateRun *runs, int n,
                                  const PpsimCalibrateOptions *o, GError **error);
void ppsim_calibration_free(PpsimCalibration *cal);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PpsimCalibration, ppsim_calibration_free)

/* `ppsim run --samples N --seed S -j T` (sim-samples.c, scenarios/README.md "Variability"). */
typedef struct {
    int samples;  /* N >= 1 */
    guint64 seed; /* S: the same seed gives the same samples, whatever T */
    int threads;  /* T >= 1 */
} PpsimSampleOptions;

/* Replays the schedule of @res (a finished deterministic replay of @sc, kept with its
 * timings; recorded, PPSIM_SIM_RECORD, in hardware mode) @opt->samples times under
 * @sc's `variability:` and parallel.dp, and sets res->samples. Returns: FALSE with @error
 * when the replay cannot be sampled. */
gboolean ppsim_sim_sample(const PpsimScenario *sc, PpsimRunResult *res,
                          const PpsimSampleOptions *opt, GError **error);

/* Each op's total float in the noiseless replay the sampler compiles from @res (its
 * slowdowns in, its windows out): how far the op's end may slip before the makespan moves.
 * Indexed by op id (schedule-index.h numbering). Returns: (transfer full) (nullable). */
PpsimTime *ppsim_sim_slack(const PpsimScenario *sc, const PpsimRunResult *res, GError **error);
/* The makespan of that replay when op @op lasts @delay_ps longer (-1 on error): max(makespan,
 * makespan - float + delay), which the tests check. */
PpsimTime ppsim_sim_delayed_makespan(const PpsimScenario *sc, const PpsimRunResult *res, guint32 op,
                                     PpsimTime delay_ps, GError **error);

G_END_DECLS
