/* generator.h: the generator plug-in class and its options.
 *
 * Generators are pure: a pipeline shape, validated options and cost estimates in, schedule
 * IR out; they know nothing of hardware. Registering one is one line in
 * src/sched/meson.build.
 */
#pragma once

#include <glib.h>
#include "cost/cost-estimates.h"
#include "schedule/schedule.h"

G_BEGIN_DECLS

typedef enum {
    PPSIM_OPTION_INT,
    PPSIM_OPTION_DOUBLE,
    PPSIM_OPTION_STRING,
} PpsimOptionType;

/* One generator option (YAML key under `schedule: {name: ..., key: value}`). */
typedef struct {
    const char *name;
    PpsimOptionType type;
    const char *default_value; /* as text; NULL means "not set" */
    const char *help;
} PpsimOptionSpec;

/* Options after validation against a generator's table (options.c). */
typedef struct PpsimOptions PpsimOptions;

gboolean ppsim_options_is_set(const PpsimOptions *opts, const char *name);
gint64 ppsim_options_get_int(const PpsimOptions *opts, const char *name);
double ppsim_options_get_double(const PpsimOptions *opts, const char *name);
const char *ppsim_options_get_string(const PpsimOptions *opts, const char *name);

/* Shape of the pipeline a generator must fill. */
typedef struct {
    int p; /* devices */
    int v; /* chunks (virtual stages) per device */
    int m; /* microbatches */
} PpsimPipelineShape;

/* What a solver-backed generator (optpipe) says about how it made its schedule; reported
 * per result (text, and JSON `solver`). Plain data, no pointers. */
typedef struct {
    gboolean present;
    char path[32];       /* which path produced the schedule: "milp", "warm-start", "heuristic" */
    char status[32];     /* solver status ("optimal", "time_limit", ...) or "not-run" */
    char note[128];      /* why the path was taken, when not the MILP's ("" otherwise) */
    char warning[256];   /* for stderr: e.g. a corrupt cache entry ignored ("" if none) */
    double objective_ms; /* the incumbent's objective (NAN: none) */
    double bound_ms;     /* best lower bound (NAN: none) */
    double gap;          /* (objective - bound) / objective (NAN: none) */
    double seconds;      /* solver wall time (not deterministic) */
} PpsimSolverReport;

typedef struct {
    const PpsimOptions *options;     /* never NULL */
    const PpsimCostEstimates *costs; /* never NULL */
    PpsimSolverReport *solver;       /* nullable: where solver-backed generators report */
} PpsimScheduleParams;

typedef gboolean (*PpsimGenerateFunc)(const PpsimPipelineShape *shape,
                                      const PpsimScheduleParams *params, PpsimSchedule **out,
                                      GError **error);

typedef struct {
    const char *name;               /* kebab-case key for CLI and YAML, e.g. "zb-h1" */
    const char *summary;            /* one line for `ppsim list schedules` */
    const char *reference;          /* citation key of reference/formulas.md, e.g. "[ZB] Table 2" */
    int chunks;                     /* fixed v (1 for 1F1B, 2 for V-shapes); 0 = training.chunks */
    const PpsimOptionSpec *options; /* table closed by {NULL}; nullable */
    PpsimGenerateFunc generate;
} PpsimScheduleClass;

/* The scenario's memory limit as device @device's activation budget: memory_limit minus the
 * static memory (weights, gradients, optimizer states) of the stages @stage_device puts on
 * it, in memory units. Meaningful only when costs->memory_limit_set. (memory-cap.c) */
gint64 ppsim_memory_cap_budget(const PpsimCostEstimates *costs, const int *stage_device,
                               int n_stages, int device);

/* The default cap of generators that take one: when the scenario set memory.limit, fills
 * @limit[n_devices] with each device's activation budget and sets *@applied; else leaves
 * @limit alone and clears *@applied. Errors (PPSIM_SCHED_ERROR_UNSUPPORTED, prefixed by
 * @what): a budget below one microbatch's activation of all the device's stages, naming the
 * smallest feasible memory.limit. */
gboolean ppsim_memory_cap_default(const PpsimCostEstimates *costs, const int *stage_device,
                                  int n_stages, int n_devices, gint64 *limit, gboolean *applied,
                                  const char *what, GError **error);

/* @amount of memory units as text in the run's unit ("3 units", "12.50 GiB").
 * Returns: (transfer full). */
char *ppsim_memory_cap_format(const PpsimCostEstimates *costs, gint64 amount);

/* Validates @values (PpsimOptionValue array from the scenario, nullable) against @klass's
 * table; errors name the option's "file:line:col" via @display_name and carry a did-you-mean.
 * Returns: (transfer full) (nullable). */
PpsimOptions *ppsim_options_new(const PpsimScheduleClass *klass, const GArray *values,
                                const char *display_name, GError **error);
void ppsim_options_free(PpsimOptions *opts);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(PpsimOptions, ppsim_options_free)

G_END_DECLS
